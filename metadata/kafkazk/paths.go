package kafkazk

import (
	"fmt"
	"strconv"
)

// The znodes a ZooKeeper-era Kafka cluster keeps (ZkData's paths).
const (
	// BrokersPath holds /brokers/ids, /brokers/topics and /brokers/seqid.
	BrokersPath = "/brokers"
	// BrokerIDsPath has one ephemeral child per live broker.
	BrokerIDsPath = "/brokers/ids"
	// TopicsPath has one child per topic: its replica assignment.
	TopicsPath = "/brokers/topics"
	// ControllerPath is the ephemeral znode of the active controller.
	ControllerPath = "/controller"
	// ControllerEpochPath holds the controller epoch; its zkVersion fences
	// every controller write.
	ControllerEpochPath = "/controller_epoch"
	// DeleteTopicsPath has one child per topic marked for deletion.
	DeleteTopicsPath = "/admin/delete_topics"
	// ClusterIDPath holds the cluster id.
	ClusterIDPath = "/cluster/id"
	// ProducerIDBlockPath holds the last block of producer ids handed out.
	ProducerIDBlockPath = "/latest_producer_id_block"
	// IsrChangeNotificationPath is where brokers older than AlterPartition
	// announced ISR changes; kept so that such a broker finds it.
	IsrChangeNotificationPath = "/isr_change_notification"
)

// PersistentPaths are the znodes a broker makes sure exist at start
// (ZkData.PersistentZkPaths, the ones kraftlab's brokers and Kafka 3.9's
// look for).
var PersistentPaths = []string{
	"/consumers",
	BrokerIDsPath,
	TopicsPath,
	"/config/changes",
	"/admin/delete_topics",
	"/brokers/seqid",
	IsrChangeNotificationPath,
	"/latest_producer_id_block",
	"/log_dir_event_notification",
	"/config/topics",
	"/config/clients",
	"/config/users",
	"/config/brokers",
	"/config/ips",
}

// BrokerPath is the ephemeral registration of broker id.
func BrokerPath(id int32) string { return BrokerIDsPath + "/" + strconv.Itoa(int(id)) }

// TopicPath is topic's replica assignment.
func TopicPath(topic string) string { return TopicsPath + "/" + topic }

// PartitionsPath is the parent of topic's partition states.
func PartitionsPath(topic string) string { return TopicPath(topic) + "/partitions" }

// PartitionPath is the parent of one partition's state.
func PartitionPath(topic string, partition int32) string {
	return PartitionsPath(topic) + "/" + strconv.Itoa(int(partition))
}

// PartitionStatePath is one partition's leader and ISR.
func PartitionStatePath(topic string, partition int32) string {
	return PartitionPath(topic, partition) + "/state"
}

// TopicConfigPath is topic's configuration overrides.
func TopicConfigPath(topic string) string { return "/config/topics/" + topic }

// DeleteTopicPath marks topic for deletion.
func DeleteTopicPath(topic string) string { return DeleteTopicsPath + "/" + topic }

// parseID reads a child name of /brokers/ids.
func parseID(name string) (int32, error) {
	n, err := strconv.ParseInt(name, 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s/%s: not a broker id", BrokerIDsPath, name)
	}
	return int32(n), nil
}
