// Package node presents a MetadataImage as the tree of directories and
// files that kafka-metadata-shell browses, with the names and texts of
// Kafka's org.apache.kafka.image.node classes:
//
//	/image/provenance                      offset 41, epoch 3, time 2026-…Z[UTC]
//	/image/features/metadataVersion        Optional[4.4-IV2]
//	/image/features/finalized_group.version
//	/image/cluster/brokers/101             BrokerRegistration(id=101, …)
//	/image/cluster/controllers/            (empty: kraftlab's controllers do not register)
//	/image/topics/byName/orders/0          PartitionRegistration(replicas=[…], …)
//	/image/topics/byId/<uuid>/name
//	/image/configs/TOPIC:orders/retention.ms
//
// A directory lists its children (List, as the shell's ls sorts them);
// a file prints its text. Print walks a node with a Printer as Kafka's
// MetadataNode.print does; Stringify prints it on one line as Kafka's
// NodeStringifier (config values redacted), Cat as the shell's cat and tree
// do (a name per directory, indented, values shown).
package node
