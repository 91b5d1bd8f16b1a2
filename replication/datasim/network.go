package datasim

import "time"

// network carries messages between the brokers, the controller and the
// producer with seeded delays, and loses them on cut links, to stopped
// brokers, to a later incarnation of the broker they were sent to (its
// connections died with the old one) and, rarely, at random. A lost
// request is noticed by its sender's timeout, as over TCP.
type network struct {
	s    *Sim
	cut  map[link]bool
	slow map[link]time.Duration
	// dropPerMille is the chance of a random loss, per thousand messages.
	dropPerMille int
	sent, lost   int
}

// link is an unordered pair of addresses.
type link struct{ a, b int32 }

func linkOf(a, b int32) link {
	if a > b {
		a, b = b, a
	}
	return link{a, b}
}

func newNetwork(s *Sim) *network {
	return &network{s: s, cut: map[link]bool{}, slow: map[link]time.Duration{}, dropPerMille: 5}
}

// incarnation is the address's current incarnation, and whether it runs.
func (n *network) incarnation(id int32) (int, bool) {
	if b, ok := n.s.brokers[id]; ok {
		return b.incarnation, b.up
	}
	return 0, true
}

// send delivers msg from one address to another after a delay, unless it
// is lost; deliver runs at the destination.
func (n *network) send(from, to int32, what string, deliver func()) {
	n.sent++
	fromInc, _ := n.incarnation(from)
	toInc, up := n.incarnation(to)
	l := linkOf(from, to)
	if !up || n.cut[l] || n.s.rng.IntN(1000) < n.dropPerMille {
		n.lost++
		return
	}
	delay := n.s.jitter(200*time.Microsecond, 3*time.Millisecond) + n.slow[l]
	if n.slow[l] > 0 {
		delay += n.s.jitter(0, n.slow[l])
	}
	n.s.after(delay, what, func() {
		fi, _ := n.incarnation(from)
		ti, up := n.incarnation(to)
		if fi != fromInc || ti != toInc || !up || n.cut[l] {
			n.lost++
			return
		}
		deliver()
	})
}
