package interop

import (
	"context"
	"fmt"
	"time"
)

// topicElr is what kafka-topics --describe prints of topic's eligible
// leader replicas (KIP-966), from DescribeTopicPartitions: "N/A" when the
// broker does not serve it.
func topicElr(topic string) observer {
	return func(ctx context.Context, r *run) ([]fact, error) {
		out, err := r.tool(ctx, MainTopics, "--describe", "--topic", topic)
		if err != nil {
			return nil, err
		}
		ts := ParseTopicsDescribe(out)
		if len(ts) != 1 || len(ts[0].Partitions) != 1 {
			return nil, fmt.Errorf("kafka-topics --describe %s: %q", topic, out)
		}
		p := ts[0].Partitions[0]
		elr, last := r.labelsOf(p.Elr), r.labelsOf(p.LastKnownElr)
		if p.ElrUnknown {
			elr, last = "N/A", "N/A"
		}
		return []fact{{key: "elr", value: elr}, {key: "last known elr", value: last}}, nil
	}
}

// elrAfterLastIsrFenced: with ELR on (both clusters formatted as Kafka
// 4.4 does by default, min.insync.replicas 1), the follower P1 is killed
// and leaves the ISR; then the leader P0, the last ISR member, is killed.
// P1 is started again so that the tools have a broker to ask; it was in
// neither the ISR nor the ELR, so it may not lead. Once P0 is fenced the
// ISR has emptied into the ELR, the partition has no leader, and P0 is
// its last known leader. P0 restarted after that crash leaves the ELR
// (an unclean shutdown), and once unfenced is elected as the last known
// leader; P1 then rejoins the ISR.
func elrAfterLastIsrFenced(l *lockstep) {
	const topic = "eligible"
	l.begin()
	l.createPartition(topic)
	l.observe("created", topicDescribe(topic), topicElr(topic))
	l.each(func(r *run) error { id, _ := r.idOf("P1"); return r.sys.Kill(l.ctx, id) })
	l.wait("P1 out of the ISR", 30*time.Second, func(r *run) (bool, string) {
		p, err := PartitionLeader(r.sys, topic)
		return err == nil && len(p.Isr) == 1 && r.label(p.Leader) == "P0", fmt.Sprint(p, err)
	})
	l.observe("P1 killed", topicDescribe(topic), topicElr(topic))
	l.each(func(r *run) error { id, _ := r.idOf("P0"); return r.sys.Kill(l.ctx, id) })
	l.each(func(r *run) error { id, _ := r.idOf("P1"); return r.sys.Start(l.ctx, id) })
	l.wait("P0 fenced", time.Minute, func(r *run) (bool, string) { id, _ := r.idOf("P0"); return fenced(r, id) })
	l.wait("the partition leaderless", 30*time.Second, func(r *run) (bool, string) {
		p, err := PartitionLeader(r.sys, topic)
		return err == nil && p.Leader < 0, fmt.Sprint(p, err)
	})
	l.observe("P0 killed, P1 restarted", topicDescribe(topic), topicElr(topic))
	l.each(func(r *run) error { id, _ := r.idOf("P0"); return r.sys.Start(l.ctx, id) })
	l.wait("P0 leads again", time.Minute, func(r *run) (bool, string) {
		p, err := PartitionLeader(r.sys, topic)
		return err == nil && r.label(p.Leader) == "P0", fmt.Sprint(p, err)
	})
	l.wait("P1 back in the ISR", time.Minute, func(r *run) (bool, string) {
		p, err := PartitionLeader(r.sys, topic)
		return err == nil && len(p.Isr) == 2, fmt.Sprint(p, err)
	})
	l.observe("P0 restarted", topicDescribe(topic), topicElr(topic))
}
