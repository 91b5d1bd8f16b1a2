package server

import (
	"sync"

	"github.com/kraftlab/kraftlab/metadata/image"
)

// appliedImage is the newest metadata image the ReplicaManager has
// reconciled its replicas with. A broker answers Metadata from it rather
// than from the loader's newest image, so a client never hears of a
// partition this broker leads before the broker can serve it: between
// the loader publishing a new topic and the manager's goroutine opening
// its logs and making it leader (file I/O, milliseconds to tens of them),
// a ListOffsets or Fetch would be UNKNOWN_TOPIC_OR_PARTITION or
// NOT_LEADER_OR_FOLLOWER, and franz-go's consumer retries a failed
// offset load only after a second.
type appliedImage struct {
	mu  sync.Mutex
	img *image.MetadataImage
	// pending: an image that changes replicas was published and not yet
	// reconciled; images published meanwhile wait for it.
	pending bool
}

// published records an image the loader published; store makes it the
// manager's newest under the same lock, so reconciled sees it. An image
// that changes no replica (reconcile false) is applied at once unless a
// reconciliation is pending.
func (a *appliedImage) published(img *image.MetadataImage, reconcile bool, store func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	store()
	switch {
	case reconcile:
		a.pending = true
	case !a.pending:
		a.img = img
	}
}

// reconciled records that the manager's replicas now match img; newest
// is the manager's newest published image. It reports whether img was the
// newest: if not, the newer one must be reconciled too.
func (a *appliedImage) reconciled(img *image.MetadataImage, newest func() *image.MetadataImage) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.img = img
	if newest() != img {
		return false
	}
	a.pending = false
	return true
}

// load is the newest reconciled image.
func (a *appliedImage) load() *image.MetadataImage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.img
}

// AppliedImage is the newest metadata image whose partitions the manager
// hosts as the image assigns them (leaders leading, followers following):
// the image the broker's Metadata answers come from.
func (rm *ReplicaManager) AppliedImage() *image.MetadataImage { return rm.applied.load() }
