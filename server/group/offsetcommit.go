package group

import (
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxMetadataSize is offset.metadata.max.bytes, Kafka's 4096: a commit's
// metadata above it is OFFSET_METADATA_TOO_LARGE.
const maxMetadataSize = 4096

// handleOffsetCommit writes a commit's offsets as one batch to the
// group's partition and answers once it is committed (Kafka's
// OffsetMetadataManager.commitOffset). A commit of generation -1 to an
// empty or unknown group is a simple commit, which makes the group (an
// admin's, or a consumer's without group management).
func (c *Coordinator) handleOffsetCommit(req *wire.Request) {
	c.offsetCommit(req.Body.(*kmsg.OffsetCommitRequest), req.Respond)
}

// offsetCommit is handleOffsetCommit's work, answered through answer.
func (c *Coordinator) offsetCommit(r *kmsg.OffsetCommitRequest, answer func(kmsg.Response)) {
	resp := kmsg.NewPtrOffsetCommitResponse()
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	failAll := func(code int16) {
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				resp.Topics[i].Partitions[j].ErrorCode = code
			}
		}
		answer(resp)
	}
	if r.Group == "" {
		failAll(kerr.InvalidGroupID.Code)
		return
	}
	s, code := c.shardFor(r.Group)
	if code != 0 {
		failAll(code)
		return
	}
	answered := false
	if code := s.do(func(now time.Time) {
		code, validPartition := s.validateCommitLocked(r, now)
		if code != 0 {
			failAll(code)
			answered = true
			return
		}
		var topics Topics
		if validPartition != nil {
			topics = s.c.topics()
		}
		var recs []storage.Record
		type written struct {
			tp TopicPartition
			c  Committed
		}
		var ws []written
		for i, t := range r.Topics {
			for j, p := range t.Partitions {
				meta := ""
				if p.Metadata != nil {
					meta = *p.Metadata
				}
				if c.exists != nil && !c.exists(t.Topic, p.Partition) {
					resp.Topics[i].Partitions[j].ErrorCode = kerr.UnknownTopicOrPartition.Code
					continue
				}
				if validPartition != nil {
					ti, _ := topics.ByName(t.Topic)
					if code := validPartition(ti.ID, p.Partition); code != 0 {
						resp.Topics[i].Partitions[j].ErrorCode = code
						continue
					}
				}
				if len(meta) > maxMetadataSize {
					resp.Topics[i].Partitions[j].ErrorCode = kerr.OffsetMetadataTooLarge.Code
					continue
				}
				cm := Committed{Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: meta, CommitTimestamp: now.UnixMilli(), ExpireTimestamp: -1}
				if r.Version < 6 {
					cm.LeaderEpoch = -1
				}
				tp := TopicPartition{t.Topic, p.Partition}
				recs = append(recs, OffsetCommitRecord(r.Group, tp, &cm))
				ws = append(ws, written{tp, cm})
			}
		}
		if len(recs) == 0 {
			return
		}
		answered = true
		s.queueLocked(recs, func(base int64, code int16) {
			code = appendError(code, true)
			if code == 0 {
				s.mu.Lock()
				if s.dead {
					// Written, but the coordinator moved on and may have
					// loaded before it: the client commits again there.
					code = kerr.NotCoordinator.Code
				} else {
					for i, w := range ws {
						w.c.logOffset = base + int64(i)
						s.applyOffsetLocked(r.Group, w.tp, w.c, now)
					}
				}
				s.mu.Unlock()
			}
			for i := range resp.Topics {
				for j := range resp.Topics[i].Partitions {
					if resp.Topics[i].Partitions[j].ErrorCode == 0 {
						resp.Topics[i].Partitions[j].ErrorCode = code
					}
				}
			}
			answer(resp)
		})
	}); code != 0 {
		failAll(code)
		return
	}
	if !answered {
		answer(resp)
	}
}

// validateCommitLocked checks a commit against its group (Kafka's
// ClassicGroup.validateOffsetCommit), making the group of a simple
// commit. s.mu is held.
func (s *shard) validateCommitLocked(r *kmsg.OffsetCommitRequest, now time.Time) (int16, func([16]byte, int32) int16) {
	if cg := s.cgroups[r.Group]; cg != nil {
		return cg.ValidateCommit(r.MemberID, r.Generation, r.Version)
	}
	return s.validateClassicCommitLocked(r, now), nil
}

// validateClassicCommitLocked is validateCommitLocked for a classic
// group, or none. s.mu is held.
func (s *shard) validateClassicCommitLocked(r *kmsg.OffsetCommitRequest, now time.Time) int16 {
	g := s.groups[r.Group]
	if g == nil {
		switch {
		case r.Generation < 0:
			g = NewGroup(r.Group, s.c.timing, now)
			s.groups[r.Group] = g
			return 0
		case r.Version >= 9:
			return kerr.GroupIDNotFound.Code
		default:
			return kerr.IllegalGeneration.Code
		}
	}
	switch {
	case g.State() == Dead:
		return kerr.CoordinatorNotAvailable.Code
	case r.Generation < 0 && g.State() == Empty:
		return 0 // a simple commit, from a client outside group management
	case r.Generation >= 0 || r.MemberID != "" || r.InstanceID != nil:
		if code := g.ValidateMember(r.MemberID, r.InstanceID); code != 0 {
			return code
		}
		if r.Generation != g.Generation() {
			return kerr.IllegalGeneration.Code
		}
	default:
		return kerr.UnknownMemberID.Code // no member id: only an empty group takes it
	}
	if g.State() == CompletingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	g.Touch(now, r.MemberID)
	return 0
}

// applyOffsetLocked records a committed offset unless a later record
// already set it. The group is made if a DeleteGroups took it meanwhile.
// s.mu is held.
func (s *shard) applyOffsetLocked(group string, tp TopicPartition, c Committed, now time.Time) {
	os := s.offsets[group]
	if os == nil {
		os = map[TopicPartition]Committed{}
		s.offsets[group] = os
	}
	if old, ok := os[tp]; ok && old.logOffset > c.logOffset {
		return
	}
	os[tp] = c
	if s.groups[group] == nil && s.cgroups[group] == nil {
		s.groups[group] = NewGroup(group, s.c.timing, now)
	}
}
