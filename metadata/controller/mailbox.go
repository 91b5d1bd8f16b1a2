package controller

import (
	"sync"

	"github.com/kraftlab/kraftlab/metadata/image"
)

// mailbox is the controller's event queue: anyone may post without
// blocking, and only the loop takes. Committed images are coalesced
// (each one holds everything before it), everything else keeps its order.
type mailbox struct {
	mu     sync.Mutex
	events []func()
	image  *image.MetadataImage
	closed bool
	wake   chan struct{}
}

func newMailbox() *mailbox { return &mailbox{wake: make(chan struct{}, 1)} }

// post queues ev; it reports false, dropping ev, once the mailbox closed.
func (m *mailbox) post(ev func()) bool {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return false
	}
	m.events = append(m.events, ev)
	m.mu.Unlock()
	m.signal()
	return true
}

// close refuses later posts and returns the events still queued.
func (m *mailbox) close() []func() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	evs := m.events
	m.events, m.image = nil, nil
	return evs
}

func (m *mailbox) postImage(img *image.MetadataImage) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	if m.image == nil || img.Provenance().LastContainedOffset >= m.image.Provenance().LastContainedOffset {
		m.image = img
	}
	m.mu.Unlock()
	m.signal()
}

func (m *mailbox) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// take returns the newest committed image posted (nil if none) and the
// events, in order.
func (m *mailbox) take() (*image.MetadataImage, []func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	img, evs := m.image, m.events
	m.image, m.events = nil, nil
	return img, evs
}
