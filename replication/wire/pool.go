package wire

import (
	"reflect"
	"sync"
)

// memPool bounds the bytes that a server's requests may hold at once, as
// Kafka's memory pool (queued.max.request.bytes) does: a reservation is
// granted while anything is left, so one larger than the pool is served once
// the pool drains, and peak use is at most the limit plus one reservation.
// A reader whose reservation is not granted waits, which stops it reading
// from its connection (Kafka mutes the channel).
type memPool struct {
	limit int64 // <= 0: unlimited

	mu    sync.Mutex
	used  int64
	freed chan struct{} // closed on release when someone waits; nil otherwise
}

// acquire reserves n bytes, waiting while the pool is exhausted, and reports
// false if done closed first.
func (p *memPool) acquire(n int64, done <-chan struct{}) bool {
	for {
		p.mu.Lock()
		if p.limit <= 0 || p.used < p.limit {
			p.used += n
			p.mu.Unlock()
			return true
		}
		if p.freed == nil {
			p.freed = make(chan struct{})
		}
		freed := p.freed
		p.mu.Unlock()
		select {
		case <-freed:
		case <-done:
			return false
		}
	}
}

// release returns n bytes to the pool.
func (p *memPool) release(n int64) {
	if n == 0 {
		return
	}
	p.mu.Lock()
	p.used -= n
	if p.freed != nil && (p.limit <= 0 || p.used < p.limit) {
		close(p.freed)
		p.freed = nil
	}
	p.mu.Unlock()
}

func (p *memPool) inUse() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.used
}

// pools are the two pools that one class of connection draws on: frames,
// charged before a frame is read, and decoding, charged before it is
// decoded. Two, because with one, frames read but not yet decoded could
// fill it and wait for each other for ever.
type pools struct {
	frames  memPool // request frames being read or not yet answered
	decoded memPool // what decoding those frames may allocate
}

func newPools(limit int64) *pools {
	return &pools{frames: memPool{limit: limit}, decoded: memPool{limit: limit}}
}

// inUse returns what both pools have granted.
func (p *pools) inUse() int64 { return p.frames.inUse() + p.decoded.inUse() }

// decodeAmplification bounds what decoding a request may allocate, in heap
// bytes per byte of frame: the worst measured for the APIs kraftlab serves
// is 77 (Metadata v9+ with an unknown tagged field on every topic; Fetch and
// Produce 67, the KRaft RPCs 64), see amp_test.go. The server charges every
// frame this much before decoding it.
const decodeAmplification = 100

// maxDecodeCharge bounds what decoding one request may be charged: the
// most that decoding a 1 MiB frame of any API may allocate. A request
// other than Produce may therefore be at most 1 MiB (maxStructuredFrame);
// a Produce, whose bulk is record bytes that decoding does not copy, is
// charged what its structure really costs (produceDecodeBound), so it
// may be as large as the listener's socket.request.max.bytes.
const maxDecodeCharge = 100 << 20

// maxStructuredFrame is the largest request frame other than Produce a
// server reads.
const maxStructuredFrame = maxDecodeCharge / decodeAmplification

// largeFrame is the size from which a frame is decoded under largeDecode and
// its charge is cut to what the decoded request really holds.
const largeFrame = 64 << 10

// largeDecode serialises the decoding of large frames in the whole process,
// so that every node's servers and clients together hold at most one large
// frame's worth of decoder garbage.
var largeDecode sync.Mutex

// heldBytes estimates the heap that the decoded message m holds beyond the
// frame it was decoded from: kmsg's []byte fields alias the frame and are
// not counted; slices, strings, pointers and unknown tags are.
func heldBytes(m any) int64 {
	n, _ := footprint(m)
	return n
}

// footprint is heldBytes, and whether m still points into the frame it
// was decoded from (a non-empty []byte field, an unknown tagged field):
// then the frame cannot be freed while m lives.
func footprint(m any) (int64, bool) {
	v := reflect.ValueOf(m)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return 0, false
	}
	var aliases bool
	return int64(v.Type().Elem().Size()) + held(v.Elem(), &aliases), aliases
}

// held returns the heap v refers to, not counting v itself, and sets
// *aliases if v points into the frame.
func held(v reflect.Value, aliases *bool) int64 {
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len())
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		return int64(v.Type().Elem().Size()) + held(v.Elem(), aliases)
	case reflect.Map:
		// kmsg.Tags: a Go map costs a few hundred bytes, then about
		// 64 bytes an entry with its value's bytes aliasing the frame.
		if v.IsNil() {
			return 0
		}
		if v.Len() > 0 {
			*aliases = true
		}
		return 320 + 64*int64(v.Len())
	case reflect.Slice:
		if v.IsNil() {
			return 0
		}
		et := v.Type().Elem()
		if et.Kind() == reflect.Uint8 {
			if v.Len() > 0 {
				*aliases = true
			}
			return 0
		}
		n := int64(v.Cap()) * int64(et.Size())
		if hasRefs(et) {
			for i := range v.Len() {
				n += held(v.Index(i), aliases)
			}
		}
		return n
	case reflect.Struct:
		var n int64
		for i := range v.NumField() {
			if f := v.Field(i); hasRefs(f.Type()) {
				n += held(f, aliases)
			}
		}
		return n
	}
	return 0
}

var refsCache sync.Map // reflect.Type → bool

// hasRefs reports whether values of t may refer to heap memory.
func hasRefs(t reflect.Type) bool {
	if r, ok := refsCache.Load(t); ok {
		return r.(bool)
	}
	var r bool
	switch t.Kind() {
	case reflect.String, reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		r = true
	case reflect.Array:
		r = hasRefs(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasRefs(t.Field(i).Type) {
				r = true
				break
			}
		}
	}
	refsCache.Store(t, r)
	return r
}
