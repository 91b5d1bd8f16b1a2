package tui

import (
	"fmt"

	"github.com/dustin/go-humanize"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// zooKeeperView is the ZooKeeper era's place of the commit picture: the
// ZooKeeper, who holds /controller, what its last failover read and how
// long the cluster went unmanaged, and its queue of pushes TO each
// broker. It renders in w cells and at most h lines.
func zooKeeperView(st *Styles, v *view.View, w, h int) block {
	z := v.ZooKeeper
	ctl := "no controller"
	if z.ControllerID != view.NoLeader {
		ctl = fmt.Sprintf("controller: broker %d (controller epoch %d)", z.ControllerID, z.ControllerEpoch)
	}
	out := block{section(st, fmt.Sprintf("ZooKeeper %s %s · %s", z.Addr, z.State, ctl), w)}
	if len(z.CutOff) > 0 && len(out) < h {
		out = append(out, clip(st.Warn.Render(fmt.Sprintf("cut off from ZooKeeper: %s (their sessions expire unless healed first)", joinIDs(z.CutOff))), w))
	}
	if z.Sessions >= 0 && len(out) < h {
		out = append(out, clip(st.Dim.Render("in ZooKeeper: ")+fmt.Sprintf("%d %s · %d znodes (%d ephemeral) · %d %s · %.0f requests/s",
			z.Sessions, plural(z.Sessions, "session", "sessions"), z.Znodes, z.Ephemerals, z.Watches, plural(z.Watches, "watch", "watches"), z.RequestsPerSec), w))
	}
	if f := z.LastFailover; f != nil && len(out) < h {
		out = append(out, clip(st.Dim.Render("last failover: ")+fmt.Sprintf("read %d znodes in %.1f ms (%d %s); managing %.1f ms after its election",
			f.Reads, f.ReadMs, f.Partitions, plural(int64(f.Partitions), "partition", "partitions"), f.TotalMs), w))
	}
	if len(z.Channels) == 0 || len(out) >= h {
		return out
	}
	out = append(out, st.Label.Render(clip(fmt.Sprintf("%4s  %5s  %-14s  %12s  %14s  %11s  %7s", "TO", "QUEUE", "IN FLIGHT", "LeaderAndIsr", "UpdateMetadata", "StopReplica", "BYTES"), w)))
	for _, c := range z.Channels {
		if len(out) >= h {
			break
		}
		inFlight := c.InFlight
		if inFlight == "" {
			inFlight = "-"
		}
		out = append(out, clip(fmt.Sprintf("%4d  %5d  %-14s  %12d  %14d  %11d  %7s", c.Broker, c.Queued, inFlight,
			c.LeaderAndIsr, c.UpdateMetadata, c.StopReplica, humanize.Bytes(uint64(c.Bytes))), w))
	}
	return out
}
