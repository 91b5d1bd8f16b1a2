package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// The recovery election is the unclean recovery Kafka designed in KIP-966
// and has not shipped, for the case kraftlab can tell apart: every member
// of a leaderless partition's ISR holds its replica in a lost log
// directory (its files lost records; see assignReplicasToDirs), so
// waiting for the ISR brings nothing back. The controller asks every other
// replica for the end of its log and the epoch of its last batch
// (ReplicaLogInfo, what KIP-966's GetReplicaLogInfo carries) and elects
// the one with the newest, longest log — the "balanced" strategy: it
// waits until every replica outside the lost directories is alive and has
// answered, so that no record an intact replica holds is truncated away.
// Only when every replica is in a lost directory does it elect the best of
// those. The new leader starts alone in the ISR, RECOVERING, as after an
// unclean election.

// LogInfo is what a replica says of its log for the recovery election.
type LogInfo struct {
	// LastEpoch is the leader epoch of the log's last batch, -1 if none.
	LastEpoch int32
	// LogEndOffset is the offset the log's next record would take.
	LogEndOffset int64
}

// better reports whether a log is newer than o: a later last epoch, then
// a longer log (KIP-966's order).
func (l LogInfo) better(o LogInfo) bool {
	if l.LastEpoch != o.LastEpoch {
		return l.LastEpoch > o.LastEpoch
	}
	return l.LogEndOffset > o.LogEndOffset
}

// ReplicaLogInfo asks broker for its replica's LogInfo of topic's
// partition. It does network I/O: the controller calls it off its loop.
type ReplicaLogInfo func(ctx context.Context, broker int32, topic string, partition int32) (LogInfo, error)

// recoveryQueryTimeout bounds one round of ReplicaLogInfo calls.
const recoveryQueryTimeout = 5 * time.Second

// recoveryKey names a partition for the recovery bookkeeping.
type recoveryKey struct {
	topic     record.Uuid
	partition int32
}

// cleanLeaders are the replicas of a leaderless partition that a clean
// election waits for: its ISR; with eligible leader replicas, once the
// ISR is empty, its ELR, and once that is empty too, its last known
// leader (PartitionChangeBuilder's electAnyLeader order).
func cleanLeaders(p *image.PartitionRegistration) []int32 {
	switch {
	case len(p.Isr) > 0:
		return p.Isr
	case len(p.Elr) > 0:
		return p.Elr
	}
	return p.LastKnownElr
}

// recoveryCandidates are the replicas a recovery election may ask about p,
// or why it must wait; need says whether p needs one at all: it has no
// leader and every replica a clean election waits for (cleanLeaders) is
// in a lost directory.
func recoveryCandidates(img *image.MetadataImage, p *image.PartitionRegistration) (candidates []int32, waitFor []int32, need bool) {
	members := cleanLeaders(p)
	if p.HasLeader() || len(members) == 0 {
		return nil, nil, false
	}
	cluster := img.Cluster()
	lost := func(r int32) bool {
		return p.Directory(r) == record.DirectoryLost || !p.ReplicaOnline(r, cluster.Broker(r))
	}
	for _, r := range members {
		if !lost(r) {
			return nil, nil, false // an ISR member may come back whole
		}
	}
	alive := func(r int32) bool {
		b := cluster.Broker(r)
		return b != nil && !b.Fenced && !b.InControlledShutdown
	}
	var lostAlive []int32
	for _, r := range p.Replicas {
		switch {
		case lost(r) && alive(r):
			lostAlive = append(lostAlive, r)
		case lost(r):
		case alive(r):
			candidates = append(candidates, r)
		default:
			waitFor = append(waitFor, r)
		}
	}
	if len(candidates) == 0 && len(waitFor) == 0 {
		// Every replica lost records: the best of them is all there is.
		return lostAlive, nil, true
	}
	return candidates, waitFor, true
}

// maybeStartRecoveries asks the candidates of every partition that needs
// a recovery election and has none in flight, off the loop; the answers
// come back as electRecovered events.
func (c *QuorumController) maybeStartRecoveries() {
	if c.cfg.ReplicaLogInfo == nil {
		return
	}
	img := c.st.working
	for _, name := range img.Topics().Names() {
		t := img.Topics().TopicByName(name)
		for _, pid := range t.PartitionIDs() {
			p := t.Partition(pid)
			if p.HasLeader() {
				continue
			}
			key := recoveryKey{t.ID(), pid}
			if c.st.recovering[key] {
				continue
			}
			candidates, waitFor, need := recoveryCandidates(img, p)
			if !need {
				continue
			}
			if len(waitFor) > 0 || len(candidates) == 0 {
				if !slices.Equal(c.st.recoveryWaits[key], waitFor) {
					c.st.recoveryWaits[key] = waitFor
					c.log.Warn("recovery election waits for intact replicas", "topic", name, "partition", pid, "waitFor", waitFor)
					c.emit(Event{Kind: EventRecoveryWaiting, Topic: name, TopicID: t.ID(), Partition: pid, Isr: slices.Clone(cleanLeaders(p)),
						Reason: fmt.Sprintf("every ISR member lost records; waiting for %s, which may hold them, to be alive", brokerList(waitFor))})
				}
				continue
			}
			delete(c.st.recoveryWaits, key)
			c.st.recovering[key] = true
			c.queries.Add(1)
			go c.queryLogs(key, name, p.PartitionEpoch, candidates)
		}
	}
}

// queryLogs asks each candidate for its log, then posts the answers to
// the loop.
func (c *QuorumController) queryLogs(key recoveryKey, topic string, partitionEpoch int32, candidates []int32) {
	defer c.queries.Done()
	ctx, cancel := c.cfg.Cluster.WithTimeout(c.queryCtx, recoveryQueryTimeout)
	defer cancel()
	infos := make(map[int32]LogInfo, len(candidates))
	var failed []string
	for _, b := range candidates {
		info, err := c.cfg.ReplicaLogInfo(ctx, b, topic, key.partition)
		if err != nil {
			failed = append(failed, fmt.Sprintf("broker %d: %v", b, err))
			continue
		}
		infos[b] = info
	}
	c.box.post(func() { c.electRecovered(key, topic, partitionEpoch, candidates, infos, failed) })
}

// electRecovered elects the best candidate once all have answered and the
// partition has not changed meanwhile; otherwise the next scan asks again.
func (c *QuorumController) electRecovered(key recoveryKey, topic string, partitionEpoch int32, candidates []int32, infos map[int32]LogInfo, failed []string) {
	delete(c.st.recovering, key)
	if !c.st.active {
		return
	}
	if len(failed) > 0 {
		c.log.Info("recovery election: a replica did not answer; asking again", "topic", topic, "partition", key.partition, "errors", failed)
		return
	}
	img := c.st.working
	t := img.Topics().Topic(key.topic)
	if t == nil {
		return
	}
	p := t.Partition(key.partition)
	if p == nil || p.PartitionEpoch != partitionEpoch {
		return // changed meanwhile: the next scan looks again
	}
	best := int32(-1)
	for _, b := range candidates {
		if best < 0 || infos[b].better(infos[best]) {
			best = b
		}
	}
	ch := record.NewPartitionChangeRecord(key.topic, key.partition)
	ch.Version = c.versions(img).partitionChange
	ch.Leader, ch.Isr, ch.LeaderRecoveryState = best, []int32{best}, record.LeaderRecovering
	if ch.Version >= 2 {
		// As after an unclean election: the ELR goes, and the partition
		// has a leader again.
		if len(p.Elr) > 0 {
			ch.EligibleLeaderReplicas = []int32{}
		}
		if len(p.LastKnownElr) > 0 {
			ch.LastKnownElr = []int32{}
		}
	}
	var logs []string
	for _, b := range candidates {
		logs = append(logs, fmt.Sprintf("%d: epoch %d, log end %d", b, infos[b].LastEpoch, infos[b].LogEndOffset))
	}
	reason := fmt.Sprintf("every ISR member (%s) lost records; broker %d holds the newest, longest log (%s)",
		brokerList(cleanLeaders(p)), best, strings.Join(logs, "; "))
	c.log.Warn("recovery election", "topic", topic, "partition", key.partition, "leader", best, "reason", reason)
	ev := Event{Kind: EventRecoveryElection, Topic: topic, TopicID: key.topic, Partition: key.partition,
		Leader: best, Isr: []int32{best}, LastIsr: slices.Clone(cleanLeaders(p)), Reason: reason}
	if err := c.write([]record.Record{ch}, []Event{ev, changeEvent(topic, ch, p, "recovery election")}, nil); err != nil {
		c.log.Error("cannot write a recovery election", "err", err)
	}
}

func brokerList(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	if len(ids) == 1 {
		return "broker " + s[0]
	}
	return "brokers " + strings.Join(s, ", ")
}
