// Package cache answers a broker's clients from the metadata image, as
// Kafka's KRaftMetadataCache and KafkaApis do (handleTopicMetadataRequest,
// handleDescribeCluster): which brokers are alive, which topics exist, and
// each partition's leader, replicas and in-sync replicas.
//
// Everything here is a pure function of an immutable image.MetadataImage:
// no goroutines, no sockets, no locks. A broker passes the image its loader
// last published, so one request reads one image from start to end, as
// Kafka's cache grabs its volatile image once per request.
//
// "Alive" means what it means in Kafka: registered and not fenced. A broker
// is listed to clients only if it also has the listener the client came in
// on, since the client needs an address on that listener.
package cache
