package condition

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// The evaluators of the conditions on the data plane: partitions' high
// watermarks and replicas' logs as the brokers hold them, and the
// followers' fetchers.

func partitionHWM(c Condition, _ *view.View, p *view.Partition) (bool, string, error) {
	return c.op.holds(p.HighWatermark, c.value.n), fmt.Sprintf("%s: %s", c.tp, dataSummary(p)), nil
}

// replicaLogEnd compares the log end offset of broker N's replica, -1
// when it hosts none.
func replicaLogEnd(c Condition, v *view.View, p *view.Partition) (bool, string, error) {
	id, err := c.node.Resolve(v)
	if err != nil {
		return false, "", err
	}
	have := int64(-1)
	if r, ok := replicaState(p, id); ok && r.Hosted {
		have = r.LogEndOffset
	}
	return c.op.holds(have, c.value.n), fmt.Sprintf("broker %d log end %d (want %s %d); %s: %s", id, have, c.op, c.value.n, c.tp, dataSummary(p)), nil
}

// inSync: the ISR holds every replica, a leader's broker knows the high
// watermark, and every hosted replica's log ends there.
func inSync(c Condition, _ *view.View, p *view.Partition) (bool, string, error) {
	saw := fmt.Sprintf("%s: %s", c.tp, dataSummary(p))
	if p.HighWatermark < 0 || len(p.Isr) != len(p.Replicas) || len(p.ReplicaStates) != len(p.Replicas) {
		return false, saw, nil
	}
	for _, r := range p.ReplicaStates {
		if r.Hosted && r.LogEndOffset != p.HighWatermark {
			return false, saw, nil
		}
	}
	return true, saw, nil
}

func replicaState(p *view.Partition, broker int32) (view.PartitionReplica, bool) {
	for _, r := range p.ReplicaStates {
		if r.Broker == broker {
			return r, true
		}
	}
	return view.PartitionReplica{}, false
}

// dataSummary is a partition's metadata with its high watermark and each
// replica's log end offset.
func dataSummary(p *view.Partition) string {
	ends := make([]string, 0, len(p.Replicas))
	for _, id := range p.Replicas {
		end := "-"
		if r, ok := replicaState(p, id); ok && r.Hosted {
			end = strconv.FormatInt(r.LogEndOffset, 10)
		}
		ends = append(ends, fmt.Sprintf("%d:%s", id, end))
	}
	return fmt.Sprintf("%s, hwm %d, log ends %s", p.Summary(), p.HighWatermark, strings.Join(ends, " "))
}

// onFetchers evaluates f on the fetcher threads of the broker c names,
// while it runs.
func onFetchers(f func(c Condition, id int32, threads []view.FetcherThread) (bool, string)) evalFunc {
	return func(c Condition, v *view.View) (bool, string, error) {
		n, err := c.brokerNode(v)
		if err != nil {
			return false, "", err
		}
		if n.State != view.StateRunning || n.Broker == nil {
			return false, fmt.Sprintf("broker %d is %s: no fetchers", n.ID, n.State), nil
		}
		ok, saw := f(c, n.ID, n.Broker.Fetchers)
		return ok, saw, nil
	}
}

// fetcherLag compares the broker's largest fetcher partition lag.
func fetcherLag(c Condition, id int32, threads []view.FetcherThread) (bool, string) {
	lag, worst, unknown := int64(0), "", 0
	for _, th := range threads {
		for _, fp := range th.Partitions {
			if fp.Lag < 0 {
				unknown++
				continue
			}
			if fp.Lag > lag || worst == "" {
				lag, worst = fp.Lag, fmt.Sprintf("%s-%d on %s", fp.Topic, fp.Partition, th.Name)
			}
		}
	}
	saw := fmt.Sprintf("broker %d max lag %d", id, lag)
	if worst != "" {
		saw += " (" + worst + ")"
	}
	if unknown > 0 {
		// A partition before its first answer has no lag yet: waiting helps.
		noun := "partitions"
		if unknown == 1 {
			noun = "partition"
		}
		return false, fmt.Sprintf("%s; %d %s not answered yet", saw, unknown, noun)
	}
	return c.op.holds(lag, c.value.n), saw
}

// truncations counts the truncations of the broker's fetcher partition
// T-P: 0 when no thread of it fetches T-P (it leads it, or follows none).
func truncations(c Condition, id int32, threads []view.FetcherThread) (bool, string) {
	have, where := int64(0), fmt.Sprintf("no fetcher thread of broker %d fetches %s", id, c.tp)
	for _, th := range threads {
		for _, fp := range th.Partitions {
			if fp.Topic == c.tp.Topic && fp.Partition == c.tp.Partition {
				have, where = fp.Truncations, fmt.Sprintf("%s on %s: %s, fetch offset %d", c.tp, th.Name, fp.State, fp.FetchOffset)
			}
		}
	}
	return c.op.holds(have, c.value.n), fmt.Sprintf("broker %d truncations %d (want %s %d); %s", id, have, c.op, c.value.n, where)
}
