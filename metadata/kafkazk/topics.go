package kafkazk

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"
)

// ErrTopicExists says a topic of that name has an assignment already.
var ErrTopicExists = errors.New("the topic exists")

// Topics are the topics' names, sorted, and a watch that fires once when
// the set changes.
func (c *Client) Topics() ([]string, <-chan zk.Event, error) {
	names, _, w, err := c.conn.ChildrenW(TopicsPath)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", TopicsPath, err)
	}
	slices.Sort(names)
	return names, w, nil
}

// Assignment reads topic's replica assignment; ok is false if the topic
// has none.
func (c *Client) Assignment(topic string) (Assignment, bool, error) {
	data, _, err := c.conn.Get(TopicPath(topic))
	if errors.Is(err, zk.ErrNoNode) {
		return Assignment{}, false, nil
	}
	if err != nil {
		return Assignment{}, false, fmt.Errorf("read %s: %w", TopicPath(topic), err)
	}
	a, err := DecodeAssignment(topic, data)
	return a, err == nil, err
}

// AssignmentW reads topic's replica assignment as Assignment does, with
// a watch that fires once when it changes or goes (Kafka's
// PartitionModificationsHandler); none if the topic has no assignment.
func (c *Client) AssignmentW(topic string) (Assignment, bool, <-chan zk.Event, error) {
	data, _, w, err := c.conn.GetW(TopicPath(topic))
	if errors.Is(err, zk.ErrNoNode) {
		return Assignment{}, false, nil, nil
	}
	if err != nil {
		return Assignment{}, false, nil, fmt.Errorf("read %s: %w", TopicPath(topic), err)
	}
	a, err := DecodeAssignment(topic, data)
	return a, err == nil, w, err
}

// SetAssignment writes a topic's new replica assignment over its old
// one, as an admin adding partitions does (AdminZkClient's
// writeTopicPartitionAssignment, whatever the version): the controller's
// watch on the topic then makes the new partitions.
func (c *Client) SetAssignment(a Assignment) error {
	if _, err := c.conn.Set(TopicPath(a.Topic), EncodeAssignment(a), -1); err != nil {
		return fmt.Errorf("write %s: %w", TopicPath(a.Topic), err)
	}
	return nil
}

// CreateTopic writes a new topic's assignment, as an admin does
// (AdminZkClient.createTopicWithAssignment): the controller's watch on
// /brokers/topics then makes its partitions.
func (c *Client) CreateTopic(a Assignment) error {
	acl := zk.WorldACL(zk.PermAll)
	// The topic's (empty) configuration first, then its assignment,
	// which the controller watches; in one multi-op, where Kafka writes
	// them one after the other.
	_, err := c.conn.Multi(
		&zk.CreateRequest{Path: TopicConfigPath(a.Topic), Data: []byte(`{"version":1,"config":{}}`), Acl: acl},
		&zk.CreateRequest{Path: TopicPath(a.Topic), Data: EncodeAssignment(a), Acl: acl})
	if errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("create topic %s: %w", a.Topic, ErrTopicExists)
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", a.Topic, err)
	}
	return nil
}

// PartitionState reads topic's partition's leader and ISR; ok is false if
// the partition has no state yet.
func (c *Client) PartitionState(topic string, partition int32) (LeaderAndIsr, bool, error) {
	path := PartitionStatePath(topic, partition)
	data, stat, err := c.conn.Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		return LeaderAndIsr{}, false, nil
	}
	if err != nil {
		return LeaderAndIsr{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	s, err := DecodeLeaderAndIsr(topic, partition, stat.Version, data)
	return s, err == nil, err
}

// CreatePartitionState writes a new partition's first state, with its
// parents, fenced by seat; it returns the state at its zkVersion, 0.
func (c *Client) CreatePartitionState(seat Seat, topic string, partition int32, s LeaderAndIsr) (LeaderAndIsr, error) {
	acl := zk.WorldACL(zk.PermAll)
	var ops []any
	// The parents may exist from an earlier try that failed after them.
	for _, p := range []string{PartitionsPath(topic), PartitionPath(topic, partition)} {
		if ok, _, err := c.conn.Exists(p); err != nil {
			return LeaderAndIsr{}, fmt.Errorf("read %s: %w", p, err)
		} else if !ok {
			ops = append(ops, &zk.CreateRequest{Path: p, Acl: acl})
		}
	}
	ops = append(ops, &zk.CreateRequest{Path: PartitionStatePath(topic, partition), Data: EncodeLeaderAndIsr(s), Acl: acl})
	if _, err := c.fenced(seat, ops...); err != nil {
		return LeaderAndIsr{}, fmt.Errorf("create %s: %w", PartitionStatePath(topic, partition), err)
	}
	s.ZkVersion = 0
	return s, nil
}

// UpdatePartitionState writes s over the state at s.ZkVersion, fenced by
// seat, and returns it at its new zkVersion. ErrBadVersion says another
// write came first.
func (c *Client) UpdatePartitionState(seat Seat, topic string, partition int32, s LeaderAndIsr) (LeaderAndIsr, error) {
	path := PartitionStatePath(topic, partition)
	resp, err := c.fenced(seat, &zk.SetDataRequest{Path: path, Data: EncodeLeaderAndIsr(s), Version: s.ZkVersion})
	if err != nil {
		if errors.Is(err, zk.ErrBadVersion) {
			return LeaderAndIsr{}, fmt.Errorf("update %s at version %d: %w", path, s.ZkVersion, ErrBadVersion)
		}
		return LeaderAndIsr{}, fmt.Errorf("update %s: %w", path, err)
	}
	s.ZkVersion = resp[1].Stat.Version
	return s, nil
}

// MarkForDeletion writes /admin/delete_topics/T, which the controller
// watches (AdminZkClient.deleteTopic).
func (c *Client) MarkForDeletion(topic string) error {
	_, err := c.conn.Create(DeleteTopicPath(topic), nil, 0, zk.WorldACL(zk.PermAll))
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("mark %s for deletion: %w", topic, err)
	}
	return nil
}

// TopicsToDelete are the topics marked for deletion, sorted, and a watch
// that fires once when the set changes.
func (c *Client) TopicsToDelete() ([]string, <-chan zk.Event, error) {
	names, _, w, err := c.conn.ChildrenW(DeleteTopicsPath)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", DeleteTopicsPath, err)
	}
	slices.Sort(names)
	return names, w, nil
}

// DeleteTopic removes a deleted topic's znodes, its mark last, fenced by
// seat (the controller's TopicDeletionManager, once its replicas were
// told to delete theirs). Znodes already gone are skipped.
func (c *Client) DeleteTopic(seat Seat, topic string) error {
	var paths []string
	parts, _, err := c.conn.Children(PartitionsPath(topic))
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("list %s: %w", PartitionsPath(topic), err)
	}
	for _, p := range parts {
		dir := PartitionsPath(topic) + "/" + p
		paths = append(paths, dir+"/state", dir)
	}
	paths = append(paths, PartitionsPath(topic), TopicPath(topic), TopicConfigPath(topic), DeleteTopicPath(topic))
	var ops []any
	for _, p := range paths {
		if ok, _, err := c.conn.Exists(p); err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		} else if ok {
			ops = append(ops, &zk.DeleteRequest{Path: p, Version: -1})
		}
	}
	if len(ops) == 0 {
		return nil
	}
	if _, err := c.fenced(seat, ops...); err != nil {
		return fmt.Errorf("delete topic %s: %w", topic, err)
	}
	return nil
}
