package loader

import (
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/replication/raft"
)

// Publisher receives every image the loader publishes, on the loader's
// goroutine, in log order. It must not block.
type Publisher interface {
	// OnMetadataUpdate hands the delta just applied and the new image.
	OnMetadataUpdate(delta *image.MetadataDelta, img *image.MetadataImage, m Manifest)
	// OnLeaderChange reports the raft client's new leader or epoch. The loader has
	// published every image before the leader's epoch when the node hears it leads.
	OnLeaderChange(l raft.LeaderAndEpoch)
}

// PublisherFuncs is a Publisher made of functions, for parts whose methods
// have other names (a nil field ignores its call).
type PublisherFuncs struct {
	// Update is called for OnMetadataUpdate.
	Update func(delta *image.MetadataDelta, img *image.MetadataImage, m Manifest)
	// Leader is called for OnLeaderChange.
	Leader func(l raft.LeaderAndEpoch)
}

var _ Publisher = PublisherFuncs{}

// OnMetadataUpdate implements Publisher.
func (p PublisherFuncs) OnMetadataUpdate(delta *image.MetadataDelta, img *image.MetadataImage, m Manifest) {
	if p.Update != nil {
		p.Update(delta, img, m)
	}
}

// OnLeaderChange implements Publisher.
func (p PublisherFuncs) OnLeaderChange(l raft.LeaderAndEpoch) {
	if p.Leader != nil {
		p.Leader(l)
	}
}
