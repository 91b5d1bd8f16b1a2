package engine

import (
	"errors"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/metadata/kafkazk"
)

// zkLinks are the links between the brokers and ZooKeeper, which do not
// go through the playground's wire.Links (ZooKeeper speaks its own
// protocol): a broker cut off from ZooKeeper has its connections closed
// and its dials refused, so its session expires as a partitioned
// broker's would, while it goes on serving its clients and peers.
type zkLinks struct {
	mu    sync.Mutex
	down  map[int32]bool
	conns map[int32][]net.Conn
}

func newZkLinks() *zkLinks {
	return &zkLinks{down: map[int32]bool{}, conns: map[int32][]net.Conn{}}
}

var errZkLinkDown = errors.New("the link to ZooKeeper is down")

// dial is broker id's way to ZooKeeper.
func (l *zkLinks) dial(id int32) kafkazk.Dial {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.down[id] {
			return nil, errZkLinkDown
		}
		c, err := net.DialTimeout(network, address, timeout)
		if err == nil {
			live := slices.DeleteFunc(l.conns[id], func(old net.Conn) bool { return old == nil })
			l.conns[id] = append(live, c)
		}
		return c, err
	}
}

// set cuts (down) or restores broker id's link to ZooKeeper.
func (l *zkLinks) set(id int32, down bool) {
	l.mu.Lock()
	var cut []net.Conn
	if down {
		cut = l.conns[id]
		delete(l.conns, id)
		l.down[id] = true
	} else {
		delete(l.down, id)
	}
	l.mu.Unlock()
	for _, c := range cut {
		c.Close()
	}
}

// cutOff are the brokers cut off from ZooKeeper, sorted.
func (l *zkLinks) cutOff() []int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]int32, 0, len(l.down))
	for id := range l.down {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
