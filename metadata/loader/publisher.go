package loader

import (
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/replication/raft"
)

// Publisher receives every image the loader publishes, on the raft client's
// loop goroutine, in log order. It must not block.
type Publisher interface {
	// OnMetadataUpdate hands the delta just applied and the new image.
	OnMetadataUpdate(delta *image.MetadataDelta, img *image.MetadataImage, m Manifest)
	// OnLeaderChange reports the raft client's new leader or epoch. The loader has
	// published every image before the leader's epoch when the node hears it leads.
	OnLeaderChange(l raft.LeaderAndEpoch)
}
