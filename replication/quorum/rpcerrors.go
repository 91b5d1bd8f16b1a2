package quorum

import (
	"maps"
	"sync"
)

// rpcErrors counts failed exchanges: error responses the node sent (peer
// -1), and per peer the requests it sent that failed or were answered with
// an error (key -1 when the request got no answer at all). Errors are rare,
// so a mutex is cheap enough.
type rpcErrors struct {
	mu     sync.Mutex
	counts map[int32]map[int16]int64
}

func (e *rpcErrors) add(peer int32, key int16) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts = make(map[int32]map[int16]int64)
	}
	if e.counts[peer] == nil {
		e.counts[peer] = make(map[int16]int64)
	}
	e.counts[peer][key]++
}

func (e *rpcErrors) snapshot() (sent map[int16]int64, received map[int32]map[int16]int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	sent = maps.Clone(e.counts[-1])
	received = make(map[int32]map[int16]int64)
	for peer, m := range e.counts {
		if peer != -1 {
			received[peer] = maps.Clone(m)
		}
	}
	return sent, received
}
