package zkcontroller

import (
	"github.com/go-zookeeper/zk"
	"sync"

	"github.com/kraftlab/kraftlab/metadata/kafkazk"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// failover makes this broker the active controller (Kafka's
// onControllerFailover): it knows nothing yet, so it reads every broker,
// topic and partition state out of ZooKeeper, setting the watches it
// needs, and then pushes the whole state to every broker. Until it has,
// nothing in the cluster is managed.
func (c *KafkaController) failover(seat kafkazk.Seat) {
	start := c.cfg.Clock.Now()
	c.log.Info("elected controller", "epoch", seat.Epoch)
	c.emit(Event{Kind: Elected, Epoch: seat.Epoch})
	ctx := newContext(seat)
	f := Failover{Epoch: seat.Epoch}
	if err := c.readCluster(ctx, &f); err != nil {
		c.log.Warn("cannot read the cluster; giving up the seat", "err", err)
		if err := c.cfg.ZK.Resign(); err != nil {
			c.log.Warn("cannot delete /controller", "err", err)
		}
		return
	}
	f.Read = c.cfg.Clock.Since(start)
	c.ctx = ctx
	c.mu.Lock()
	c.status.Active, c.status.Epoch, c.status.ControllerID = true, seat.Epoch, c.cfg.NodeID
	c.mu.Unlock()
	for _, id := range ctx.liveIDs() {
		c.ch.add(ctx.live[id])
	}
	// The live brokers first, so that the LeaderAndIsr behind it finds
	// its leaders; then every replica its state, and every partition
	// without a live leader an election.
	b := newBatch(ctx, c.cfg.NodeID)
	b.updateMetadataTo(ctx.liveIDs())
	for _, tp := range ctx.partitions() {
		b.leaderAndIsrTo(ctx.replicas(tp), tp, false)
	}
	c.send(b)
	if !c.electOffline(ctx.partitions()) {
		return
	}
	// Replicas on brokers that are gone leave the ISRs (the replica state
	// machine's start, moving them to OfflineReplica).
	b = newBatch(ctx, c.cfg.NodeID)
	for _, tp := range ctx.partitions() {
		for _, r := range ctx.states[tp].ISR {
			if !ctx.isLive(r) && !c.removeFromISR(r, []TopicPartition{tp}, b) {
				return
			}
		}
	}
	c.send(b)
	c.initNewPartitions()
	c.deleteMarked()
	f.Total = c.cfg.Clock.Since(start)
	c.mu.Lock()
	c.status.LastFailover = f
	c.mu.Unlock()
	c.log.Info("managing the cluster", "epoch", seat.Epoch, "partitions", f.Partitions, "read", f.Read, "total", f.Total)
	c.emit(Event{Kind: Managing, Epoch: seat.Epoch, Failover: f})
}

// readCluster fills ctx from ZooKeeper (initializeControllerContext):
// the brokers and the topics, each watched, then every partition's
// state.
func (c *KafkaController) readCluster(ctx *controllerContext, f *Failover) error {
	zkc := c.cfg.ZK
	ids, w, err := zkc.BrokerIDs()
	if err != nil {
		return err
	}
	c.watch(w, c.brokersChanged)
	f.Reads++
	for _, id := range ids {
		b, ok, err := zkc.Broker(id)
		f.Reads++
		if err != nil {
			return err
		}
		if ok {
			ctx.live[id] = b
		}
	}
	topics, w, err := zkc.Topics()
	if err != nil {
		return err
	}
	c.watch(w, c.topicsChanged)
	f.Reads++
	var reads []func() error
	var mu sync.Mutex
	watches := map[string]<-chan zk.Event{}
	for _, t := range topics {
		reads = append(reads, func() error {
			a, ok, w, err := zkc.AssignmentW(t)
			if err != nil || !ok {
				return err
			}
			mu.Lock()
			ctx.topics[t], watches[t] = a, w
			mu.Unlock()
			return nil
		})
	}
	if err := inFlight(reads); err != nil {
		return err
	}
	for t, w := range watches {
		c.watchAssignment(ctx, t, w)
	}
	f.Reads += len(reads)
	reads = reads[:0]
	for _, a := range ctx.topics {
		for _, p := range a.Partitions() {
			reads = append(reads, func() error {
				s, ok, err := zkc.PartitionState(a.Topic, p)
				if err != nil || !ok {
					return err
				}
				mu.Lock()
				ctx.states[TopicPartition{a.Topic, p}] = s
				mu.Unlock()
				return nil
			})
		}
	}
	if err := inFlight(reads); err != nil {
		return err
	}
	f.Reads += len(reads)
	f.Brokers, f.Topics, f.Partitions = len(ctx.live), len(ctx.topics), len(ctx.states)
	return nil
}

// maxInFlight is zookeeper.max.in.flight.requests: Kafka's controller
// reads ZooKeeper with its asynchronous API, this many requests in
// flight on the one session.
const maxInFlight = 10

// inFlight runs reads, maxInFlight at a time, and returns the first
// error.
func inFlight(reads []func() error) error {
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxInFlight)
	errs := make(chan error, len(reads))
	for _, r := range reads {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if err := r(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// send queues b's requests on the senders.
func (c *KafkaController) send(b *requestBatch) {
	b.send(c.ch, func(to int32, resp kmsg.Response) { c.logResponse(to, resp) })
}
