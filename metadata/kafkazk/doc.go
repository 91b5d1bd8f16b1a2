// Package kafkazk is Kafka 3.9's layout in ZooKeeper (Kafka's kafka.zk:
// ZkData and KafkaZkClient): the paths of the znodes a ZooKeeper-era
// cluster keeps, their JSON as Kafka writes it, and a client that reads
// and writes them over a ZooKeeper session.
//
// Every write the controller makes is fenced by the controller epoch:
// it goes in one multi-op with a check of /controller_epoch's version,
// so a controller that lost its seat cannot write after its successor
// took it (Kafka's checkedEphemeralCreate and the epoch zkVersion). The
// codecs refuse what Kafka would not write, so a damaged or foreign
// znode is an error that names its path, never a panic.
package kafkazk
