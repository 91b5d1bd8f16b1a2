package metasim

import (
	"encoding/binary"
	"fmt"

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
		b.s().rc.Kill(b.m.id)
		return
	}
	b.stopping = true
}

func newBroker(m *member) *broker {
	return &broker{m: m, epoch: -1, target: 1 + int32(m.id)%controllers, fenced: true}
}

func (b *broker) s() *Sim { return b.m.s }

func (b *broker) start() {
	b.s().record("broker %d starts (incarnation %d)", b.m.id, b.m.inc)
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
				s.rc.Shutdown(b.m.id)
			}
		case kerr.NotController.Code:
			b.next()
		case kerr.StaleBrokerEpoch.Code:
			s.record("broker %d: epoch %d is stale; registering again", b.m.id, b.epoch)
			b.epoch, b.fenced = -1, true
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
	r.PreviousBrokerEpoch = -1
	return r
}

// uuidOf is a fixed, valid id for two numbers.
func uuidOf(a, b uint64) [16]byte {
	var u [16]byte
	binary.BigEndian.PutUint64(u[:8], a|1<<63)
	binary.BigEndian.PutUint64(u[8:], b+1)
	return u
}
