package metasim

import (
	"fmt"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DataPlane runs beside the brokers' lifecycles: their replicas, as the
// whole-cluster simulation (package cluster/sim) attaches them. metasim
// tells it each broker's starts and stops, registrations and published
// images. Its partition leaders send their own ISR changes
// (AlterPartition), so a run that attaches one turns metasim's modelled
// changes off from the start (Options.NoModelledISR).
type DataPlane interface {
	// BrokerStarted: a broker's new incarnation runs.
	BrokerStarted(id int32)
	// BrokerStopped: a broker stopped, crashed or gracefully.
	BrokerStopped(id int32, crashed bool)
	// BrokerRegistered: the broker's incarnation holds this broker epoch;
	// -1 when it must register again.
	BrokerRegistered(id int32, epoch int64)
	// BrokerImage: the broker's loader published an image.
	BrokerImage(id int32, img *image.MetadataImage)
}

// AttachDataPlane attaches dp and tells it of every running broker: its
// start, its registration and its loader's image.
func (s *Sim) AttachDataPlane(dp DataPlane) {
	s.dp = dp
	for i := range s.opts.Brokers {
		id := firstBroker + int32(i)
		b := s.brokers[id]
		if b == nil || !b.m.alive() {
			continue
		}
		dp.BrokerStarted(id)
		if b.epoch >= 0 {
			dp.BrokerRegistered(id, b.epoch)
		}
		dp.BrokerImage(id, b.m.loader.Image())
	}
}

// BrokerIDs are the brokers' addresses.
func (s *Sim) BrokerIDs() []int32 {
	ids := make([]int32, s.opts.Brokers)
	for i := range ids {
		ids[i] = firstBroker + int32(i)
	}
	return ids
}

// brokerPublisher hands a broker's published images to the data plane,
// as Kafka's BrokerMetadataPublisher hands them to its ReplicaManager.
func (s *Sim) brokerPublisher(id int32) loader.Publisher {
	return loader.PublisherFuncs{
		Update: func(_ *image.MetadataDelta, img *image.MetadataImage, _ loader.Manifest) {
			if s.dp != nil {
				s.dp.BrokerImage(id, img)
			}
		},
	}
}

// registered tells the data plane of a broker's epoch.
func (s *Sim) registered(id int32, epoch int64) {
	if s.dp != nil {
		s.dp.BrokerRegistered(id, epoch)
	}
}

// AlterPartition sends a broker's AlterPartition to the controller it
// knows as active; answer runs with the response unless the request or
// the response is lost, or the broker's incarnation ended meanwhile.
func (s *Sim) AlterPartition(from int32, req *kmsg.AlterPartitionRequest, answer func(*kmsg.AlterPartitionResponse, error)) {
	b := s.brokers[from]
	if b == nil || !b.m.alive() {
		return
	}
	s.call(from, b.target, req, b.m.alive, func(resp kmsg.Response, err error) {
		if err != nil {
			b.next()
			answer(nil, err)
			return
		}
		r, ok := resp.(*kmsg.AlterPartitionResponse)
		if !ok {
			s.rc.Fail(fmt.Errorf("broker %d: AlterPartition answered %T", from, resp))
			return
		}
		if r.ErrorCode == kerr.NotController.Code {
			b.next()
		}
		answer(r, nil)
	})
}

// Record adds a line of a layer above to the trace (and its hash) and the
// transcript.
func (s *Sim) Record(line string) { s.record("%s", line) }

// BrokerEpoch is the epoch a running broker registered with, -1 before.
func (s *Sim) BrokerEpoch(id int32) int64 {
	if b := s.brokers[id]; b != nil && b.m.alive() {
		return b.epoch
	}
	return -1
}
