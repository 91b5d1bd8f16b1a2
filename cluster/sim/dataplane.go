package sim

import (
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/metasim"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/datasim"
)

// brokers hands metasim's brokers' lives to the data plane: a started
// incarnation opens its replicas, a stopped one closes or loses them, and
// each published image is applied as the server's ReplicaManager applies
// it (after the registration gate, which datasim keeps).
type brokers struct {
	dp      *datasim.Sim
	topicID record.Uuid
	parts   int32
}

var _ metasim.DataPlane = (*brokers)(nil)

func (b *brokers) BrokerStarted(id int32)                 { b.dp.Start(id) }
func (b *brokers) BrokerStopped(id int32, crashed bool)   { b.dp.Stop(id, crashed) }
func (b *brokers) BrokerRegistered(id int32, epoch int64) { b.dp.SetBrokerEpoch(id, epoch) }

func (b *brokers) BrokerImage(id int32, img *image.MetadataImage) {
	if md, ok := metadataOf(img, b.topicID, b.parts); ok {
		b.dp.Apply(id, md)
	}
}

// metadataOf is what of img the data plane applies: the topic's
// partitions and the brokers' epochs and fencing. An image without the
// whole topic (one before its creation) has nothing to apply.
func metadataOf(img *image.MetadataImage, topicID record.Uuid, parts int32) (datasim.Metadata, bool) {
	md := datasim.Metadata{Version: img.Provenance().LastContainedOffset + 1, BrokerEpochs: map[int32]int64{}, Fenced: map[int32]bool{}}
	for idx := range parts {
		r := registrationOf(img, topicID, idx)
		if r.Leader < 0 && len(r.Replicas) == 0 {
			return md, false
		}
		md.Partitions = append(md.Partitions, r)
	}
	cl := img.Cluster()
	for _, id := range cl.BrokerIDs() {
		br := cl.Broker(id)
		md.BrokerEpochs[id] = br.Epoch
		md.Fenced[id] = br.Fenced || br.InControlledShutdown
	}
	return md, true
}
