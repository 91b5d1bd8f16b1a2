package kafkazk

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// AllocateProducerIDs hands broker the next block of size producer ids
// after /latest_producer_id_block's, with a write conditional on the
// block it read, trying again if another write came first (Kafka's
// ZkProducerIdManager). The first block starts at 0.
func (c *Client) AllocateProducerIDs(broker int32, size int64) (ProducerIDBlock, error) {
	if size <= 0 {
		return ProducerIDBlock{}, fmt.Errorf("producer id block of %d ids", size)
	}
	for range 10 {
		data, stat, err := c.conn.Get(ProducerIDBlockPath)
		if errors.Is(err, zk.ErrNoNode) {
			b := ProducerIDBlock{Broker: broker, Start: 0, End: size - 1}
			_, err := c.conn.Create(ProducerIDBlockPath, EncodeProducerIDBlock(b), 0, zk.WorldACL(zk.PermAll))
			if errors.Is(err, zk.ErrNodeExists) {
				continue
			}
			if err != nil {
				return ProducerIDBlock{}, fmt.Errorf("create %s: %w", ProducerIDBlockPath, err)
			}
			return b, nil
		}
		if err != nil {
			return ProducerIDBlock{}, fmt.Errorf("read %s: %w", ProducerIDBlockPath, err)
		}
		next := ProducerIDBlock{Broker: broker, Start: 0, End: size - 1}
		if len(data) > 0 {
			last, err := DecodeProducerIDBlock(data)
			if err != nil {
				return ProducerIDBlock{}, err
			}
			if last.End > 1<<63-1-size {
				return ProducerIDBlock{}, fmt.Errorf("%s: the producer ids are used up", ProducerIDBlockPath)
			}
			next.Start, next.End = last.End+1, last.End+size
		}
		_, err = c.conn.Set(ProducerIDBlockPath, EncodeProducerIDBlock(next), stat.Version)
		if errors.Is(err, zk.ErrBadVersion) {
			continue
		}
		if err != nil {
			return ProducerIDBlock{}, fmt.Errorf("write %s: %w", ProducerIDBlockPath, err)
		}
		return next, nil
	}
	return ProducerIDBlock{}, fmt.Errorf("write %s: other writers kept coming first", ProducerIDBlockPath)
}
