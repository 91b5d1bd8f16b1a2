package interop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/benchkit"
)

// propagationPollGap is the pause between one broker's Metadata polls:
// with the poll's own round trip it is the measurement's resolution, and
// it keeps three pollers from taking a core of the two.
const propagationPollGap = time.Millisecond

// PeerPropagation is one CreateTopics after another, each timed from
// sending it to the active controller until every broker's Metadata
// answer gives the new topic's partition a leader.
type PeerPropagation struct {
	Changes int `json:"changes"`
	// Answer is from sending CreateTopics to the controller's answer
	// (both systems answer once the records commit).
	Answer benchkit.Spread `json:"createTopicsAnswer"`
	// AllBrokers is from sending to the last broker's first Metadata
	// answer holding the topic; one sample per change.
	AllBrokers benchkit.Spread `json:"allBrokers"`
	// PollRoundTrip is one Metadata poll's round trip: with
	// propagationPollGap, how late a poll may see a broker's change.
	PollRoundTrip benchkit.Spread `json:"pollRoundTrip"`
}

// runPeerPropagation makes cfg.Changes one-partition topics (replication
// factor min(3, brokers)), one at a time.
func runPeerPropagation(ctx context.Context, pc peerCluster, cfg PeerConfig, name string, progress io.Writer) (PeerPropagation, error) {
	var res PeerPropagation
	var answers, all, rtts []time.Duration
	finish := func(err error) (PeerPropagation, error) {
		res.Changes = len(all)
		res.Answer, res.AllBrokers, res.PollRoundTrip = benchkit.SpreadOf(answers), benchkit.SpreadOf(all), benchkit.SpreadOf(rtts)
		return res, err
	}
	bs, err := pinnedAll(pc.brokers())
	if err != nil {
		return finish(err)
	}
	defer closeAll(bs)
	rf := int16(min(3, cfg.Brokers))
	for i := range cfg.Changes {
		l, err := activeController(ctx, pc)
		if err != nil {
			return finish(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		answer, last, rt, err := propagateOnce(cctx, l, bs, fmt.Sprintf("peer-propagation-%03d", i), rf)
		cancel()
		l.close()
		if err != nil {
			return finish(fmt.Errorf("change %d: %w", i+1, err))
		}
		answers, all, rtts = append(answers, answer), append(all, last), append(rtts, rt...)
	}
	res, err = finish(nil)
	fmt.Fprintf(progress, "%s: propagation of %d changes to all %d brokers p50 %v p99 %v (CreateTopics answered p50 %v; poll round trip p50 %v)\n",
		name, res.Changes, len(bs), res.AllBrokers.P50.Round(time.Microsecond), res.AllBrokers.P99.Round(time.Microsecond),
		res.Answer.P50.Round(time.Microsecond), res.PollRoundTrip.P50.Round(time.Microsecond))
	return res, err
}

// propagateOnce sends CreateTopics for topic to the controller ctl while
// every broker is polled, and returns the answer's time, the last
// broker's time and the polls' round trips.
func propagateOnce(ctx context.Context, ctl *pinned, brokers []*pinned, topic string, rf int16) (answer, last time.Duration, rtts []time.Duration, err error) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	pctx, stopPolls := context.WithCancel(ctx)
	defer stopPolls()
	arrived := make([]time.Duration, len(brokers))
	pollErrs := make([]error, len(brokers))
	start := time.Now()
	for i, b := range brokers {
		wg.Go(func() {
			var mine []time.Duration
			defer func() { mu.Lock(); rtts = append(rtts, mine...); mu.Unlock() }()
			for pctx.Err() == nil {
				t := time.Now()
				ok, err := topicReady(pctx, b, topic, 1)
				mine = append(mine, time.Since(t))
				if ok {
					arrived[i] = time.Since(start)
					return
				}
				if err != nil {
					pollErrs[i] = err
				}
				time.Sleep(propagationPollGap)
			}
		})
	}
	err = createTopic(ctx, ctl, topic, 1, rf)
	answer = time.Since(start)
	if err != nil {
		stopPolls()
		wg.Wait()
		return answer, 0, nil, err
	}
	wg.Wait()
	for i, a := range arrived {
		if a == 0 {
			return answer, 0, rtts, fmt.Errorf("topic %s never on broker %s: %w", topic, brokers[i].addr, errors.Join(ctx.Err(), pollErrs[i]))
		}
		last = max(last, a)
	}
	return answer, last, rtts, nil
}
