package metasim

import (
	"encoding/binary"
	"fmt"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// broker is one incarnation of a broker's lifecycle manager (Kafka's
// BrokerLifecycleManager): it registers with the active controller, then
// heartbeats every HeartbeatInterval with the offset its loader applied.
// It finds the active controller as the raft leader its observer knows,
// or by trying each controller in turn.
type broker struct {
	m     *member
	epoch int64 // -1 until registered
	// target is the controller it talks to; inflight the request awaited.
	target   int32
	inflight uint64
	fenced   bool
	// stopping: a controlled shutdown asks the controller to move the
	// broker's leaderships away before it stops.
	stopping bool
	// previousEpoch is the epoch of the incarnation before, if it shut
	// down cleanly; -1 otherwise.
	previousEpoch int64
	// altering is the AlterPartition awaited, 0 if none.
	altering uint64
}

// controlledShutdown begins a controlled shutdown (Kafka's
// BrokerLifecycleManager.beginControlledShutdown): the heartbeats ask
// WantShutdown until the controller answers ShouldShutdown, and then the
// broker stops. A broker not registered just stops.
func (b *broker) controlledShutdown() {
	if b.stopping {
		return
	}
	b.s().record("broker %d: controlled shutdown", b.m.id)
	if b.epoch < 0 {
		b.s().Kill(b.m.id)
		return
	}
	b.stopping = true
}

func newBroker(m *member) *broker {
	b := &broker{m: m, epoch: -1, target: 1 + int32(m.id)%controllers, fenced: true, previousEpoch: -1}
	// Kafka's clean shutdown file: written by a controlled shutdown with
	// the broker epoch, read and removed by the next incarnation, so that
	// a crash after it counts as unclean.
	if e, ok := m.s.cleanShutdown[m.id]; ok {
		b.previousEpoch = e
		delete(m.s.cleanShutdown, m.id)
	}
	return b
}

func (b *broker) s() *Sim { return b.m.s }

func (b *broker) start() {
	b.s().record("broker %d starts (incarnation %d)", b.m.id, b.m.inc)
	if dp := b.s().dp; dp != nil {
		dp.BrokerStarted(b.m.id)
	}
	// Its raft node is not up until the listener is made: begin at once
	// after.
	b.s().rc.After(0, b.beat)
}

// beat sends a registration or a heartbeat, if none is awaited, and comes
// again after the heartbeat interval.
func (b *broker) beat() {
	if !b.m.alive() {
		return
	}
	if b.inflight == 0 {
		b.send()
	}
	if !b.s().opts.NoModelledISR && b.altering == 0 && b.epoch >= 0 && !b.fenced && !b.stopping {
		b.alterIsr()
	}
	b.s().rc.After(b.s().opts.HeartbeatInterval, b.beat)
}

func (b *broker) send() {
	s := b.s()
	if l := b.m.loader.Leader(); l.LeaderID >= 1 && l.LeaderID <= controllers {
		b.target = l.LeaderID
	}
	var req kmsg.Request
	if b.epoch < 0 {
		req = b.registration()
	} else {
		hb := kmsg.NewPtrBrokerHeartbeatRequest()
		hb.Version = 1
		hb.BrokerID, hb.BrokerEpoch = b.m.id, b.epoch
		hb.CurrentMetadataOffset = b.m.loader.Image().Provenance().LastContainedOffset
		hb.WantShutdown = b.stopping
		req = hb
	}
	id := s.nextMsg()
	b.inflight = id
	to := b.target
	s.call(b.m.id, to, req, b.m.alive, func(resp kmsg.Response, err error) {
		if b.inflight != id {
			return
		}
		b.inflight = 0
		b.answered(to, resp, err)
	})
	s.rc.After(requestLimit, func() {
		if b.inflight == id {
			b.inflight = 0
			b.next()
		}
	})
}

// alterIsr is the partition leader's side of the ISR (Kafka's
// Partition.maybeExpandIsr and maybeShrinkIsr, with replication itself
// not simulated): for one partition it leads, by its own image, it
// proposes the ISR with a replica that is up again, or, now and then,
// without a follower that lagged; a leader elected uncleanly reports its
// recovery first.
func (b *broker) alterIsr() {
	s := b.s()
	r := s.rc.Rand()
	img := b.m.loader.Image()
	cluster := img.Cluster()
	for _, name := range img.Topics().Names() {
		t := img.Topics().TopicByName(name)
		for _, p := range t.PartitionIDs() {
			reg := t.Partition(p)
			if reg.Leader != b.m.id || reg.LeaderEpoch < 0 {
				continue
			}
			isr, recovery := []int32(nil), record.LeaderRecovered
			switch {
			case reg.LeaderRecoveryState == record.LeaderRecovering:
				isr = []int32{b.m.id}
			default:
				for _, id := range reg.Replicas {
					br := cluster.Broker(id)
					if !reg.InIsr(id) && br != nil && !br.Fenced && !br.InControlledShutdown {
						isr = append(append(isr, reg.Isr...), id)
						break
					}
				}
				if isr == nil && len(reg.Isr) > 1 && r.IntN(40) == 0 {
					drop := reg.Isr[r.IntN(len(reg.Isr))]
					for _, id := range reg.Isr {
						if id != drop || id == b.m.id {
							isr = append(isr, id)
						}
					}
				}
			}
			if isr == nil || (len(isr) == len(reg.Isr) && recovery == reg.LeaderRecoveryState) {
				continue
			}
			b.sendAlter(name, t.ID(), p, reg.LeaderEpoch, reg.PartitionEpoch, isr, recovery, img)
			return // one at a time, as the next must see this one's result
		}
	}
}

func (b *broker) sendAlter(name string, topic record.Uuid, p, leaderEpoch, partitionEpoch int32, isr []int32, recovery int8, img *image.MetadataImage) {
	s := b.s()
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = 3
	req.BrokerID, req.BrokerEpoch = b.m.id, b.epoch
	rt := kmsg.NewAlterPartitionRequestTopic()
	rt.TopicID = topic
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch, rp.LeaderRecoveryState = p, leaderEpoch, partitionEpoch, recovery
	for _, id := range isr {
		m := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
		m.BrokerID, m.BrokerEpoch = id, -1
		if br := img.Cluster().Broker(id); br != nil {
			m.BrokerEpoch = br.Epoch
		}
		rp.NewEpochISR = append(rp.NewEpochISR, m)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	s.record("broker %d: AlterPartition %s-%d isr %v (leader epoch %d, partition epoch %d)", b.m.id, name, p, isr, leaderEpoch, partitionEpoch)
	id := s.nextMsg()
	b.altering = id
	to := b.target
	s.call(b.m.id, to, req, b.m.alive, func(resp kmsg.Response, err error) {
		if b.altering != id {
			return
		}
		b.altering = 0
		if err != nil {
			return
		}
		r := resp.(*kmsg.AlterPartitionResponse)
		code := r.ErrorCode
		if code == 0 && len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			code = r.Topics[0].Partitions[0].ErrorCode
		}
		if code != 0 {
			s.record("broker %d: AlterPartition %s-%d answered %v", b.m.id, name, p, kerr.ErrorForCode(code))
		}
	})
	s.rc.After(requestLimit, func() {
		if b.altering == id {
			b.altering = 0
		}
	})
}

// next moves on to another controller.
func (b *broker) next() { b.target = b.target%controllers + 1 }

func (b *broker) answered(to int32, resp kmsg.Response, err error) {
	s := b.s()
	if err != nil {
		b.next()
		return
	}
	switch r := resp.(type) {
	case *kmsg.BrokerRegistrationResponse:
		switch r.ErrorCode {
		case 0:
			b.epoch = r.BrokerEpoch
			s.record("broker %d registered with controller %d: epoch %d", b.m.id, to, b.epoch)
			s.registered(b.m.id, b.epoch)
			b.send() // heartbeat at once, as Kafka's broker does
		case kerr.NotController.Code:
			b.next()
		default:
			s.record("broker %d: registration refused by %d: %v", b.m.id, to, kerr.ErrorForCode(r.ErrorCode))
		}
	case *kmsg.BrokerHeartbeatResponse:
		switch r.ErrorCode {
		case 0:
			if r.IsFenced != b.fenced {
				s.record("broker %d: fenced=%v (controller %d)", b.m.id, r.IsFenced, to)
				b.fenced = r.IsFenced
			}
			if b.stopping && r.ShouldShutdown {
				// Its leaderships moved: it stops (gracefully, so its
				// log is flushed).
				s.record("broker %d: shut down", b.m.id)
				s.cleanShutdown[b.m.id] = b.epoch
				s.Shutdown(b.m.id)
			}
		case kerr.NotController.Code:
			b.next()
		case kerr.StaleBrokerEpoch.Code:
			s.record("broker %d: epoch %d is stale; registering again", b.m.id, b.epoch)
			b.epoch, b.fenced = -1, true
			s.registered(b.m.id, -1)
		default:
			s.record("broker %d: heartbeat refused by %d: %v", b.m.id, to, kerr.ErrorForCode(r.ErrorCode))
		}
	default:
		s.rc.Fail(fmt.Errorf("broker %d: unexpected %T", b.m.id, resp))
	}
}

func (b *broker) registration() *kmsg.BrokerRegistrationRequest {
	r := kmsg.NewPtrBrokerRegistrationRequest()
	r.Version = 4
	r.BrokerID, r.ClusterID = b.m.id, clusterID
	r.IncarnationID = uuidOf(uint64(b.m.id), uint64(b.m.inc))
	l := kmsg.NewBrokerRegistrationRequestListener()
	l.Name, l.Host, l.Port = "PLAINTEXT", "127.0.0.1", uint16(9000+b.m.id)
	r.Listeners = append(r.Listeners, l)
	f := kmsg.NewBrokerRegistrationRequestFeature()
	f.Name, f.MinSupportedVersion, f.MaxSupportedVersion = record.MetadataVersionFeature, record.MetadataVersionMinimum, record.MetadataVersion4_4IV2
	r.Features = append(r.Features, f)
	elr := kmsg.NewBrokerRegistrationRequestFeature()
	elr.Name, elr.MinSupportedVersion, elr.MaxSupportedVersion = record.EligibleLeaderReplicasFeature, 0, record.EligibleLeaderReplicasOn
	r.Features = append(r.Features, elr)
	// The log directory outlives incarnations.
	r.LogDirs = [][16]byte{uuidOf(uint64(b.m.id), 1<<32)}
	r.PreviousBrokerEpoch = b.previousEpoch
	return r
}

// uuidOf is a fixed, valid id for two numbers.
func uuidOf(a, b uint64) [16]byte {
	var u [16]byte
	binary.BigEndian.PutUint64(u[:8], a|1<<63)
	binary.BigEndian.PutUint64(u[8:], b+1)
	return u
}
