package controller

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kraftlab/kraftlab/internal/transcript"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The brokers' requests of the controller transcripts, and their
// responses printed one line per partition.

func (s *txScript) register(c *transcript.Cmd) string {
	gen := byte(c.Int("incarnation", 0))
	cluster := c.Str("cluster", testCluster)
	dirNames, custom := c.Strs("dirs")
	clean := c.Has("clean")
	ids := brokerIDs(c, c.Words())
	var out transcript.Lines
	for _, id := range ids {
		req := registration(id)
		req.ClusterID, req.IncarnationID = cluster, incarnation(id, gen)
		names := dirNames
		if !custom {
			names = []string{fmt.Sprintf("d%d", id)}
		}
		if clean {
			req.PreviousBrokerEpoch = s.epochs[id]
		}
		req.LogDirs = nil
		for _, n := range names {
			req.LogDirs = append(req.LogDirs, s.dir(n))
		}
		resp := s.send(c, req).(*kmsg.BrokerRegistrationResponse)
		out = append(out, s.take()...)
		if resp.ErrorCode != 0 {
			out.Addf("BrokerRegistration %d: error=%s", id, transcript.Code(resp.ErrorCode))
			continue
		}
		s.epochs[id] = resp.BrokerEpoch
		out.Addf("BrokerRegistration %d: brokerEpoch=%d", id, resp.BrokerEpoch)
	}
	return out.String()
}

func (s *txScript) heartbeat(c *transcript.Cmd) string {
	offset, atOffset := c.IntOK("offset")
	epoch, atEpoch := c.IntOK("epoch")
	fence, shutdown := c.Has("want-fence"), c.Has("want-shutdown")
	ids := brokerIDs(c, c.Words())
	var out transcript.Lines
	for _, id := range ids {
		req := heartbeat(id, s.epochs[id], offset)
		if !atOffset {
			req.CurrentMetadataOffset = s.committedOffset()
		}
		if atEpoch {
			req.BrokerEpoch = epoch
		}
		req.WantFence, req.WantShutdown = fence, shutdown
		resp := s.send(c, req).(*kmsg.BrokerHeartbeatResponse)
		out = append(out, s.take()...)
		line := fmt.Sprintf("BrokerHeartbeat %d:", id)
		if resp.ErrorCode != 0 {
			line += " error=" + transcript.Code(resp.ErrorCode)
		}
		out.Addf("%s isCaughtUp=%v isFenced=%v shouldShutdown=%v", line, resp.IsCaughtUp, resp.IsFenced, resp.ShouldShutdown)
	}
	return out.String()
}

func (s *txScript) createTopic(c *transcript.Cmd) string {
	words := c.Words()
	if len(words) != 1 {
		c.Fatalf("create-topic NAME ...")
	}
	name := words[0]
	req := createTopic(name, c.Int32("partitions", -1), int16(c.Int32("rf", -1)))
	for i := int32(0); ; i++ {
		replicas, ok := c.IDs(fmt.Sprintf("p%d", i))
		if !ok {
			break
		}
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = i, replicas
		req.Topics[0].ReplicaAssignment = append(req.Topics[0].ReplicaAssignment, a)
	}
	if cfg, ok := c.Fields("config"); ok {
		keys := make([]string, 0, len(cfg))
		for k := range cfg {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			tc := kmsg.NewCreateTopicsRequestTopicConfig()
			tc.Name, tc.Value = k, kmsg.StringPtr(cfg[k])
			req.Topics[0].Configs = append(req.Topics[0].Configs, tc)
		}
	}
	if len(req.Topics[0].ReplicaAssignment) == 0 && len(usableBrokers(s.raft.image())) > 1 {
		// The placer starts at a random broker (as Kafka's
		// StripedReplicaPlacer): see the placement command.
		s.placed[name] = true
	}
	resp := s.send(c, req).(*kmsg.CreateTopicsResponse)
	out := s.take()
	for _, t := range resp.Topics {
		line := fmt.Sprintf("CreateTopics %s: error=%s", t.Topic, transcript.Code(t.ErrorCode))
		if t.ErrorMessage != nil {
			line += fmt.Sprintf(" message=%q", *t.ErrorMessage)
		} else {
			line += fmt.Sprintf(" partitions=%d rf=%d", t.NumPartitions, t.ReplicationFactor)
		}
		out.Addf("%s", line)
	}
	return out.String()
}

func (s *txScript) alterPartition(c *transcript.Cmd) string {
	recovering := c.Has("recovering")
	words := c.Words()
	if len(words) != 2 {
		c.Fatalf("alter-partition LEADER TOPIC-P isr=(...)")
	}
	leader := brokerIDs(c, words[:1])[0]
	id, topic, part := s.partitionArg(c, words[1])
	isr, ok := c.IDs("isr")
	if !ok {
		c.Fatalf("missing isr=(...)")
	}
	var leaderEpoch, partitionEpoch int32
	if p := s.raft.image().Topics().Partition(id, part); p != nil {
		leaderEpoch, partitionEpoch = p.LeaderEpoch, p.PartitionEpoch
	}
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = int16(c.Int32("version", 3))
	req.BrokerID, req.BrokerEpoch = leader, c.Int("broker-epoch", s.epochs[leader])
	members, _ := c.Fields("member-epochs")
	rt := kmsg.NewAlterPartitionRequestTopic()
	rt.TopicID = id
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.Partition = part
	rp.LeaderEpoch = c.Int32("leader-epoch", leaderEpoch)
	rp.PartitionEpoch = c.Int32("partition-epoch", partitionEpoch)
	if recovering {
		rp.LeaderRecoveryState = record.LeaderRecovering
	}
	for _, m := range isr {
		if req.Version < 3 {
			rp.NewISR = append(rp.NewISR, m)
			continue
		}
		e := s.epochs[m]
		if v, ok := members[fmt.Sprint(m)]; ok {
			if _, err := fmt.Sscan(v, &e); err != nil {
				c.Fatalf("member-epochs: %v", err)
			}
		}
		rp.NewEpochISR = append(rp.NewEpochISR, kmsg.AlterPartitionRequestTopicPartitionNewEpochISR{BrokerID: m, BrokerEpoch: e})
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := s.send(c, req).(*kmsg.AlterPartitionResponse)
	out := s.take()
	if resp.ErrorCode != 0 {
		out.Addf("AlterPartition: error=%s", transcript.Code(resp.ErrorCode))
		return out.String()
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			name := fmt.Sprintf("%s-%d", topic, p.Partition)
			if p.ErrorCode != 0 {
				out.Addf("AlterPartition %s: error=%s", name, transcript.Code(p.ErrorCode))
				continue
			}
			out.Addf("AlterPartition %s: leader=%d leaderEpoch=%d partitionEpoch=%d isr=%s%s", name, p.LeaderID, p.LeaderEpoch,
				p.PartitionEpoch, transcript.IDs(p.ISR), recoveryState(p.LeaderRecoveryState))
		}
	}
	return out.String()
}

func (s *txScript) assignDirs(c *transcript.Cmd) string {
	words := c.Words()
	if len(words) < 2 {
		c.Fatalf("assign-dirs ID TOPIC-P... dir=NAME")
	}
	broker := brokerIDs(c, words[:1])[0]
	dirName := c.Str("dir", "")
	if dirName == "" {
		c.Fatalf("missing dir=NAME")
	}
	req := kmsg.NewPtrAssignReplicasToDirsRequest()
	req.BrokerID, req.BrokerEpoch = broker, c.Int("broker-epoch", s.epochs[broker])
	d := kmsg.NewAssignReplicasToDirsRequestDirectory()
	d.ID = s.dir(dirName)
	names := map[[16]byte]string{}
	for _, w := range words[1:] {
		id, topic, part := s.partitionArg(c, w)
		names[id] = topic
		i := slices.IndexFunc(d.Topics, func(t kmsg.AssignReplicasToDirsRequestDirectoryTopic) bool { return t.TopicID == id })
		if i < 0 {
			t := kmsg.NewAssignReplicasToDirsRequestDirectoryTopic()
			t.TopicID = id
			d.Topics = append(d.Topics, t)
			i = len(d.Topics) - 1
		}
		p := kmsg.NewAssignReplicasToDirsRequestDirectoryTopicPartition()
		p.Partition = part
		d.Topics[i].Partitions = append(d.Topics[i].Partitions, p)
	}
	req.Directories = append(req.Directories, d)
	resp := s.send(c, req).(*kmsg.AssignReplicasToDirsResponse)
	out := s.take()
	if resp.ErrorCode != 0 {
		out.Addf("AssignReplicasToDirs: error=%s", transcript.Code(resp.ErrorCode))
		return out.String()
	}
	for _, rd := range resp.Directories {
		for _, t := range rd.Topics {
			for _, p := range t.Partitions {
				out.Addf("AssignReplicasToDirs %s-%d dir=%s: error=%s", names[t.TopicID], p.Partition, s.dirName(rd.ID), transcript.Code(p.ErrorCode))
			}
		}
	}
	return out.String()
}

func recoveryState(s int8) string {
	if s == record.LeaderRecovering {
		return " RECOVERING"
	}
	return ""
}

// leaderName prints a partition's leader, "none" for NoLeader.
func leaderName(l int32) string {
	if l == record.NoLeader {
		return "none"
	}
	return fmt.Sprint(l)
}

func joinNames(us []record.Uuid, name func(record.Uuid) string) string {
	s := make([]string, len(us))
	for i, u := range us {
		s[i] = name(u)
	}
	return "(" + strings.Join(s, ",") + ")"
}

// alterConfig sets configs of a topic, or of the cluster default when the
// name is "cluster".
func (s *txScript) alterConfig(c *transcript.Cmd) string {
	args := c.Rest()
	if len(args) < 2 || len(args[0].Vals) != 0 {
		c.Fatalf("alter-config TOPIC|cluster key=value...")
	}
	typ, name := kmsg.ConfigResourceTypeTopic, args[0].Key
	if name == "cluster" {
		typ, name = kmsg.ConfigResourceTypeBroker, ""
	}
	var ops []kmsg.IncrementalAlterConfigsRequestResourceConfig
	for _, a := range args[1:] {
		if len(a.Vals) != 1 {
			c.Fatalf("want key=value, got %s", a.String())
		}
		ops = append(ops, op(kmsg.IncrementalAlterConfigOpSet, a.Key, kmsg.StringPtr(a.Vals[0])))
	}
	resp := s.send(c, alterConfigs(false, resource(typ, name, ops...))).(*kmsg.IncrementalAlterConfigsResponse)
	out := s.take()
	for _, r := range resp.Resources {
		line := fmt.Sprintf("IncrementalAlterConfigs %s: error=%s", args[0].Key, transcript.Code(r.ErrorCode))
		if r.ErrorMessage != nil {
			line += fmt.Sprintf(" message=%q", *r.ErrorMessage)
		}
		out.Addf("%s", line)
	}
	return out.String()
}
