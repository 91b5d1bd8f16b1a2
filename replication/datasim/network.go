package datasim

import "time"

// network is Run's network between the brokers, the controller and the
// producer: seeded delays, cut and slow links and, rarely, a random loss.
// (Messages to a stopped broker, or to a later incarnation than the one
// they were sent to, the data plane drops itself: see Sim.send.)
type network struct {
	env  *ownEnv
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

func (n *network) send(from, to int32, what string, deliver func()) {
	n.sent++
	l := linkOf(from, to)
	if n.cut[l] || n.env.rng.IntN(1000) < n.dropPerMille {
		n.lost++
		return
	}
	delay := jitter(n.env.rng, 200*time.Microsecond, 3*time.Millisecond) + n.slow[l]
	if n.slow[l] > 0 {
		delay += jitter(n.env.rng, 0, n.slow[l])
	}
	n.env.After(delay, what, func() {
		if n.cut[l] {
			n.lost++
			return
		}
		deliver()
	})
}
