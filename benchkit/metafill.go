package benchkit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// fillTopicPartitions is how many partitions each topic that fills the
// metadata has; one CreateTopics request names up to fillTopicsPerRequest
// of them (Kafka refuses more than 10,000 partitions a request), and
// fillInFlight requests are in flight at once.
const (
	fillTopicPartitions  = 1000
	fillTopicsPerRequest = 5
	fillInFlight         = 4
)

// fillPartitions adds n partitions to the metadata through the active
// controller, as topics prefix-NNNNNN of fillTopicPartitions
// partitions (the last one smaller), a few requests in flight, and waits
// until every node's loader holds them.
func fillPartitions(ctx context.Context, mc *metaCluster, prefix string, n int, timeout time.Duration) error {
	if n == 0 {
		return nil
	}
	active := mc.active()
	if active == nil {
		return errors.New("no active controller")
	}
	target := active.Loader().Image().Topics().NumPartitions() + n
	type job struct {
		names []string
		size  int32
	}
	var jobs []job
	var cur job
	for t, left := 0, n; left > 0; t++ {
		size := int32(min(left, fillTopicPartitions))
		if len(cur.names) == fillTopicsPerRequest || (len(cur.names) > 0 && size != cur.size) {
			jobs = append(jobs, cur)
			cur = job{}
		}
		cur.names, cur.size = append(cur.names, fmt.Sprintf("%s-%06d", prefix, t)), size
		left -= int(size)
	}
	jobs = append(jobs, cur)
	rf := int16(min(3, len(mc.brokers)))
	fctx, cancel := context.WithTimeout(ctx, timeout+time.Duration(len(jobs))*time.Second)
	defer cancel()
	work := make(chan job)
	errs := make(chan error, fillInFlight)
	var wg sync.WaitGroup
	for range fillInFlight {
		wg.Go(func() {
			for j := range work {
				if err := mc.createTopicsRetrying(fctx, j.names, j.size, rf); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		})
	}
feed:
	for _, j := range jobs {
		select {
		case work <- j:
		case <-fctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if err := fctx.Err(); err != nil {
		return err
	}
	return waitUntil(fctx, "every node to hold the partitions", func() bool {
		for _, node := range mc.group.Servers() {
			if node.Loader().Image().Topics().NumPartitions() < target {
				return false
			}
		}
		return true
	})
}
