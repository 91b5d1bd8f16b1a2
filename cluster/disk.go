package cluster

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// doDisk sets how much longer a node's disk takes for every write and
// fsync; a node that is down keeps the setting for its next start.
func (p *Playground) doDisk(v *view.View, a Action) (Result, error) {
	if !a.Peer.IsZero() || a.OneWay || a.JitterMs != 0 || a.Loss != 0 {
		return Result{}, Errorf(ErrBadAction, "disk takes one node and a delay")
	}
	if a.DelayMs < 0 || a.DelayMs > view.MaxDiskDelay.Milliseconds() {
		return Result{}, Errorf(ErrBadAction, "disk: delay %dms must be between 0 and %v", a.DelayMs, view.MaxDiskDelay)
	}
	id, err := a.Node.Resolve(v)
	if err != nil {
		return Result{}, err
	}
	n, _ := v.Node(id)
	delay := ms(a.DelayMs)
	was := ms(n.DiskDelayMs)
	// The baseline, as before a kill: "target" is the slowed node and
	// "hwm >= baseline+N" counts what commits while its disk is slow.
	restore := p.recordBaseline(v, string(ActDisk), id)
	if err := p.engine.SetDiskDelay(id, delay); err != nil {
		restore()
		return Result{}, fmt.Errorf("disk %d: %w", id, err)
	}
	res := Result{Nodes: []int32{id}, Message: diskMessage(id, describeRole(v, n), was, delay)}
	p.publish(EventDisk, id, res.Message)
	return res, nil
}

func diskMessage(id int32, who string, was, delay time.Duration) string {
	switch {
	case delay == 0 && was == 0:
		return fmt.Sprintf("node %d's disk is already normal", id)
	case delay == 0:
		return fmt.Sprintf("node %d's disk is normal again (every write and fsync took %v longer)", id, was)
	case was == 0:
		return fmt.Sprintf("node %d's disk is slow (%s): every write and fsync of its logs takes %v longer", id, who, delay)
	}
	return fmt.Sprintf("node %d's disk now takes %v longer for every write and fsync (was %v)", id, delay, was)
}
