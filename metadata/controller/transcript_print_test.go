package controller

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/kraftlab/kraftlab/internal/transcript"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// How the controller transcripts print records, events and state: topics
// by name (their ids are random), log directories by the names the script
// gave them, fields a record leaves unchanged not at all.

func (s *txScript) topicName(id record.Uuid) string {
	if n, ok := s.names[id]; ok {
		return n
	}
	return id.String()
}

func (s *txScript) recordLine(r record.Record) string {
	switch r := r.(type) {
	case *record.FeatureLevelRecord:
		return fmt.Sprintf("FeatureLevelRecord %s=%d", r.Name, r.FeatureLevel)
	case *record.RegisterBrokerRecord:
		line := fmt.Sprintf("RegisterBrokerRecord broker=%d epoch=%d incarnation=%d", r.BrokerID, r.BrokerEpoch, incarnationGen(r.IncarnationID))
		if r.Fenced {
			line += " fenced"
		}
		if r.InControlledShutdown {
			line += " inControlledShutdown"
		}
		return line + " dirs=" + joinNames(r.LogDirs, s.dirName)
	case *record.BrokerRegistrationChangeRecord:
		line := fmt.Sprintf("BrokerRegistrationChangeRecord broker=%d epoch=%d", r.BrokerID, r.BrokerEpoch)
		switch r.Fenced {
		case record.FencingFence:
			line += " fence"
		case record.FencingUnfence:
			line += " unfence"
		}
		if r.InControlledShutdown == record.ControlledShutdownBegin {
			line += " beginControlledShutdown"
		}
		if len(r.LogDirs) > 0 {
			line += " dirs=" + joinNames(r.LogDirs, s.dirName)
		}
		return line
	case *record.TopicRecord:
		s.names[r.TopicID] = r.Name
		return "TopicRecord " + r.Name
	case *record.PartitionRecord:
		name := fmt.Sprintf("%s-%d", s.topicName(r.TopicID), r.PartitionID)
		if s.placed[s.topicName(r.TopicID)] {
			return fmt.Sprintf("PartitionRecord %s rf=%d isr=all leader=first leaderEpoch=%d partitionEpoch=%d (placed from a random broker)",
				name, len(r.Replicas), r.LeaderEpoch, r.PartitionEpoch)
		}
		return fmt.Sprintf("PartitionRecord %s replicas=%s isr=%s leader=%s leaderEpoch=%d partitionEpoch=%d dirs=%s%s", name,
			transcript.IDs(r.Replicas), transcript.IDs(r.Isr), leaderName(r.Leader), r.LeaderEpoch, r.PartitionEpoch,
			joinNames(r.Directories, s.dirName), recoveryState(r.LeaderRecoveryState))
	case *record.PartitionChangeRecord:
		line := fmt.Sprintf("PartitionChangeRecord %s-%d", s.topicName(r.TopicID), r.PartitionID)
		if r.Leader != record.NoLeaderChange {
			line += " leader=" + leaderName(r.Leader)
		}
		if r.Isr != nil {
			line += " isr=" + transcript.IDs(r.Isr)
		}
		if r.Replicas != nil {
			line += " replicas=" + transcript.IDs(r.Replicas)
		}
		if r.AddingReplicas != nil {
			line += " adding=" + transcript.IDs(r.AddingReplicas)
		}
		if r.RemovingReplicas != nil {
			line += " removing=" + transcript.IDs(r.RemovingReplicas)
		}
		switch r.LeaderRecoveryState {
		case record.LeaderRecovering:
			line += " leaderRecoveryState=RECOVERING"
		case record.LeaderRecovered:
			line += " leaderRecoveryState=RECOVERED"
		}
		if r.Directories != nil {
			line += " dirs=" + joinNames(r.Directories, s.dirName)
		}
		if r.EligibleLeaderReplicas != nil {
			line += " elr=" + transcript.IDs(r.EligibleLeaderReplicas)
		}
		if r.LastKnownElr != nil {
			line += " lastKnownElr=" + transcript.IDs(r.LastKnownElr)
		}
		return line
	case *record.ConfigRecord:
		v := "null"
		if r.Value != nil {
			v = *r.Value
		}
		res := fmt.Sprintf("type=%d name=%q", r.ResourceType, r.ResourceName)
		switch {
		case r.ResourceType == record.ResourceTopic:
			res = "topic " + r.ResourceName
		case r.ResourceType == record.ResourceBroker && r.ResourceName == "":
			res = "cluster default"
		case r.ResourceType == record.ResourceBroker:
			res = "broker " + r.ResourceName
		}
		return fmt.Sprintf("ConfigRecord %s %s=%s", res, r.Name, v)
	case *record.RemoveTopicRecord:
		return "RemoveTopicRecord " + s.topicName(r.TopicID)
	}
	return record.Name(r)
}

func (s *txScript) eventLine(e Event) string {
	line := "event: " + e.Kind.String()
	part := fmt.Sprintf(" %s-%d", e.Topic, e.Partition)
	switch e.Kind {
	case EventActivated:
		line += fmt.Sprintf(" epoch=%d", e.Epoch)
	case EventDeactivated:
		line += fmt.Sprintf(" epoch=%d reason=%q", e.Epoch, e.Reason)
	case EventBrokerRegistered, EventBrokerControlledShutdown:
		line += fmt.Sprintf(" broker=%d epoch=%d", e.Broker, e.BrokerEpoch)
	case EventBrokerUnfenced:
		line += fmt.Sprintf(" broker=%d epoch=%d metadataOffset=%d registrationOffset=%d", e.Broker, e.BrokerEpoch, e.MetadataOffset, e.RegistrationOffset)
	case EventBrokerFenced, EventBrokerSessionTimedOut:
		line += fmt.Sprintf(" broker=%d epoch=%d reason=%q", e.Broker, e.BrokerEpoch, e.Reason)
	case EventTopicCreated, EventPartitionsCreated:
		line += fmt.Sprintf(" %s partitions=%d", e.Topic, e.Partitions)
	case EventTopicDeleted:
		line += " " + e.Topic
	case EventPartitionChanged:
		line += part + fmt.Sprintf(" leader=%s isr=%s", leaderName(e.Leader), transcript.IDs(e.Isr))
		if len(e.Elr) > 0 || len(e.LastKnownElr) > 0 {
			line += fmt.Sprintf(" elr=%s lastKnownElr=%s", transcript.IDs(e.Elr), transcript.IDs(e.LastKnownElr))
		}
		if e.FromElr {
			line += " fromElr"
		}
		line += fmt.Sprintf(" reason=%q", e.Reason)
	case EventUncleanLeaderElection, EventRecoveryElection:
		line += part + fmt.Sprintf(" leader=%d isr=%s lastIsr=%s reason=%q", e.Leader, transcript.IDs(e.Isr), transcript.IDs(e.LastIsr), e.Reason)
	case EventRecoveryWaiting:
		line += part + fmt.Sprintf(" isr=%s reason=%q", transcript.IDs(e.Isr), e.Reason)
	}
	return line
}

// state prints the committed brokers and partitions.
func (s *txScript) state() string {
	var out transcript.Lines
	if epoch, ok := s.ctl.Active(); ok {
		out.Addf("controller: active epoch=%d committed=%d", epoch, s.committedOffset())
	} else {
		out.Addf("controller: inactive committed=%d", s.committedOffset())
	}
	img := s.raft.image()
	for _, id := range img.Cluster().BrokerIDs() {
		b := img.Cluster().Broker(id)
		line := fmt.Sprintf("broker %d epoch=%d", id, b.Epoch)
		switch {
		case b.Fenced:
			line += " fenced"
		case b.InControlledShutdown:
			line += " controlled-shutdown"
		default:
			line += " unfenced"
		}
		out.Addf("%s dirs=%s", line, joinNames(b.Directories, s.dirName))
	}
	for _, name := range img.Topics().Names() {
		t := img.Topics().TopicByName(name)
		for _, pid := range t.PartitionIDs() {
			p := t.Partition(pid)
			if s.placed[name] {
				out.Addf("partition %s-%d (placed from a random broker: see placement)", name, pid)
				continue
			}
			elr := ""
			if len(p.Elr) > 0 || len(p.LastKnownElr) > 0 {
				elr = fmt.Sprintf(" elr=%s lastKnownElr=%s", transcript.IDs(p.Elr), transcript.IDs(p.LastKnownElr))
			}
			out.Addf("partition %s-%d leader=%s leaderEpoch=%d partitionEpoch=%d replicas=%s isr=%s%s dirs=%s%s%s", name, pid,
				leaderName(p.Leader), p.LeaderEpoch, p.PartitionEpoch, transcript.IDs(p.Replicas), transcript.IDs(p.Isr), elr,
				joinNames(p.Directories, s.dirName), recoveryState(p.LeaderRecoveryState), reassignmentState(p))
		}
	}
	return out.String()
}

// placement checks that topic's partitions were striped over the usable
// brokers from one start, and prints what does not depend on that random
// start: the replica sets and each broker's share. That needs a number of
// partitions the usable brokers divide.
func (s *txScript) placement(c *transcript.Cmd) string {
	words := c.Words()
	if len(words) != 1 {
		c.Fatalf("placement TOPIC")
	}
	img := s.raft.image()
	t := img.Topics().TopicByName(words[0])
	if t == nil {
		c.Fatalf("no topic %s", words[0])
	}
	brokers := usableBrokers(img)
	n := len(brokers)
	if n == 0 || t.NumPartitions()%n != 0 {
		c.Fatalf("%d partitions over %d brokers: the output would depend on the random start", t.NumPartitions(), n)
	}
	start := slices.Index(brokers, t.Partition(0).Replicas[0])
	var sets []string
	replicas, leaders := map[int32]int{}, map[int32]int{}
	rf := len(t.Partition(0).Replicas)
	for _, pid := range t.PartitionIDs() {
		p := t.Partition(pid)
		for j, r := range p.Replicas {
			if start < 0 || len(p.Replicas) != rf || r != brokers[(start+int(pid)+j)%n] {
				c.Fatalf("partition %d's replicas %v are not striped over %v from %d", pid, p.Replicas, brokers, start)
			}
			replicas[r]++
		}
		if p.Leader != p.Replicas[0] || !slices.Equal(p.Isr, p.Replicas) {
			c.Fatalf("partition %d: leader %d isr %v, want the first replica and all", pid, p.Leader, p.Isr)
		}
		leaders[p.Leader]++
		set := slices.Clone(p.Replicas)
		slices.Sort(set)
		sets = append(sets, transcript.IDs(set))
	}
	slices.Sort(sets)
	var out transcript.Lines
	out.Addf("placement %s: %d partitions of %d replicas striped over %s", t.Name(), t.NumPartitions(), rf, transcript.IDs(brokers))
	out.Addf("replica sets: %s", strings.Join(sets, " "))
	for _, b := range brokers {
		out.Addf("broker %d: replicas=%d leaders=%d", b, replicas[b], leaders[b])
	}
	return out.String()
}

// incarnationGen is the generation incarnation() encoded.
func incarnationGen(u record.Uuid) int64 {
	return int64(binary.BigEndian.Uint64(u[8:])) - 1000
}
