package cache

import (
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The versions a broker serves: every version Kafka 4.4 accepts
// (MetadataRequest.json 0-13, DescribeClusterRequest.json 0-2; Kafka 4.0
// dropped old versions of other APIs but kept these), which is also every
// version kmsg encodes.
const (
	MetadataMinVersion        int16 = 0
	MetadataMaxVersion        int16 = 13
	DescribeClusterMinVersion int16 = 0
	DescribeClusterMaxVersion int16 = 2
	// DescribeConfigsRequest.json 1-4 (Kafka 4.0 dropped v0), all kmsg has.
	DescribeConfigsMinVersion int16 = 1
	DescribeConfigsMaxVersion int16 = 4
	// DescribeTopicPartitionsRequest.json 0 (KIP-966).
	DescribeTopicPartitionsMinVersion int16 = 0
	DescribeTopicPartitionsMaxVersion int16 = 0
)

// APIs are the API ranges a broker's Mux registers for Metadata,
// DescribeCluster, DescribeConfigs and DescribeTopicPartitions. All are
// open to anyone, as on a Kafka listener without an authorizer: the first
// two are how a client finds the brokers, the last two how kafka-topics
// --describe reads a topic's configs and partitions.
var APIs = []wire.APIRange{
	{Key: kmsg.Metadata.Int16(), MinVersion: MetadataMinVersion, MaxVersion: MetadataMaxVersion},
	{Key: kmsg.DescribeCluster.Int16(), MinVersion: DescribeClusterMinVersion, MaxVersion: DescribeClusterMaxVersion},
	{Key: kmsg.DescribeConfigs.Int16(), MinVersion: DescribeConfigsMinVersion, MaxVersion: DescribeConfigsMaxVersion},
	{Key: kmsg.DescribeTopicPartitions.Int16(), MinVersion: DescribeTopicPartitionsMinVersion, MaxVersion: DescribeTopicPartitionsMaxVersion},
}
