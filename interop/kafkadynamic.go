package interop

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
)

// A dynamic Kafka quorum (kraft.version 1, KIP-853), grown the way Kafka's
// documentation grows one: controller 1 formatted with kafka-storage
// format --standalone, every later controller formatted with
// --no-initial-controllers and started as an observer that finds the
// quorum through controller.quorum.bootstrap.servers, then added with
// kafka-metadata-quorum add-controller.

// StartKafkaStandalone formats controller 1 under dir with --standalone
// and starts it: a one-voter dynamic quorum.
func StartKafkaStandalone(ctx context.Context, k *Kafka, dir string) (*KafkaCluster, error) {
	c := &KafkaCluster{ClusterID: NewClusterID(), Nodes: map[int32]*KafkaNode{}, k: k}
	if _, err := c.AddDynamicController(ctx, dir, 1, "--standalone"); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// AddDynamicController formats controller id under dir with format (a
// kafka-storage format flag: --standalone or --no-initial-controllers)
// and starts it; the quorum's bootstrap server is controller 1.
func (c *KafkaCluster) AddDynamicController(ctx context.Context, dir string, id int32, format string) (*KafkaNode, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	n := &KafkaNode{ID: id, Controller: true, Addr: addr, Dir: filepath.Join(dir, fmt.Sprintf("node-%d", id)), k: c.k}
	n.LogDir = filepath.Join(n.Dir, "kafka-logs")
	boot := addr
	if first := c.Nodes[1]; first != nil {
		boot = first.Addr
	}
	c.Nodes[id] = n
	lines := []string{
		"node.id=" + strconv.Itoa(int(id)),
		"process.roles=controller",
		"controller.quorum.bootstrap.servers=" + boot,
		"controller.listener.names=CONTROLLER",
		"listeners=CONTROLLER://" + addr,
		"listener.security.protocol.map=CONTROLLER:PLAINTEXT",
		"log.dirs=" + n.LogDir,
	}
	if err := n.writeConfig(lines); err != nil {
		return nil, err
	}
	if err := n.format(ctx, c.ClusterID, []string{format}); err != nil {
		return nil, err
	}
	if err := n.Start(); err != nil {
		return nil, err
	}
	return n, nil
}

// Props is the path of the node's server.properties, which
// kafka-metadata-quorum add-controller reads as --command-config.
func (n *KafkaNode) Props() string { return n.props }
