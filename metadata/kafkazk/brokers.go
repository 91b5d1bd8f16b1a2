package kafkazk

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// RegisterBroker creates b's ephemeral registration and returns its
// broker epoch, the znode's czxid. A registration left by the broker's
// previous session is an error until ZooKeeper expires it (Kafka's
// checkedEphemeralCreate says NodeExists the same way).
func (c *Client) RegisterBroker(b Broker) (int64, error) {
	path := BrokerPath(b.ID)
	_, err := c.conn.Create(path, EncodeBroker(b), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	if err != nil {
		if errors.Is(err, zk.ErrNodeExists) {
			return 0, fmt.Errorf("register broker %d: %s exists (a previous session's, until it expires)", b.ID, path)
		}
		return 0, fmt.Errorf("register broker %d: %w", b.ID, err)
	}
	_, stat, err := c.conn.Get(path)
	if err != nil {
		return 0, fmt.Errorf("register broker %d: read back: %w", b.ID, err)
	}
	if stat.EphemeralOwner != c.conn.SessionID() {
		return 0, fmt.Errorf("register broker %d: %s belongs to another session", b.ID, path)
	}
	return stat.Czxid, nil
}

// BrokerIDs are the registered brokers' ids, sorted, and a watch that
// fires once when the set changes.
func (c *Client) BrokerIDs() ([]int32, <-chan zk.Event, error) {
	names, _, w, err := c.conn.ChildrenW(BrokerIDsPath)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", BrokerIDsPath, err)
	}
	ids, err := sortedIDs(names)
	return ids, w, err
}

// Broker reads broker id's registration; ok is false if it has none.
func (c *Client) Broker(id int32) (Broker, bool, error) {
	data, stat, err := c.conn.Get(BrokerPath(id))
	if errors.Is(err, zk.ErrNoNode) {
		return Broker{}, false, nil
	}
	if err != nil {
		return Broker{}, false, fmt.Errorf("read %s: %w", BrokerPath(id), err)
	}
	b, err := DecodeBroker(id, stat.Czxid, data)
	return b, err == nil, err
}
