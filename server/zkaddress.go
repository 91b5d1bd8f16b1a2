package server

import (
	"net"
	"strconv"
	"sync"
)

// zkAddresses is where a ZooKeeper-era broker reaches another broker: a
// playground member at its listener in the group's address book (through
// the playground's links), and a broker that joined through ZooKeeper
// alone (a real Kafka broker) at the endpoint of the inter-broker
// listener that its registration names, as Kafka's controller reaches
// brokers (ControllerChannelManager) and brokers reach the controller
// (MetadataCacheControllerNodeProvider). The controller's sends record
// the registrations they go to; the other requests find the endpoints the
// controller's UpdateMetadata listed.
type zkAddresses struct {
	peers func(id int32) (string, bool)
	meta  *zkMetadata

	mu         sync.Mutex
	registered map[int32]string
}

func newZkAddresses(peers func(int32) (string, bool), meta *zkMetadata) *zkAddresses {
	return &zkAddresses{peers: peers, meta: meta, registered: map[int32]string{}}
}

// address is broker id's address, false if none is known.
func (a *zkAddresses) address(id int32) (string, bool) {
	if addr, ok := a.peers(id); ok {
		return addr, true
	}
	a.mu.Lock()
	addr, ok := a.registered[id]
	a.mu.Unlock()
	if ok {
		return addr, true
	}
	return a.meta.endpoint(id, listenerName)
}

// register records broker id's endpoint of the inter-broker listener, as
// the controller read it from ZooKeeper.
func (a *zkAddresses) register(id int32, host string, port int32) {
	a.mu.Lock()
	a.registered[id] = net.JoinHostPort(host, strconv.Itoa(int(port)))
	a.mu.Unlock()
}
