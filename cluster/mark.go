package cluster

import (
	"fmt"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// ActMark records the baseline now, without acting on any node: a lesson
// that stops time marks where the quorum stood, then checks what each
// stepped message moved ("hwm == baseline", "node 2 log-end > baseline").
const ActMark ActionKind = "mark"

func (p *Playground) doMark(v *view.View, a Action) (Result, error) {
	if !a.Node.IsZero() || !a.Peer.IsZero() || a.OneWay || a.Topic != "" {
		return Result{}, Errorf(ErrBadAction, "mark takes no arguments")
	}
	p.recordBaseline(v, string(ActMark), 0)
	leader := "no leader"
	if v.LeaderID != view.NoLeader {
		leader = fmt.Sprintf("leader %d", v.LeaderID)
	}
	msg := fmt.Sprintf("marked the baseline: %s, epoch %d, high watermark %d; conditions compare baseline values with these", leader, lastLeaderEpoch(v), v.HighWatermark)
	p.publish(EventMark, 0, msg)
	return Result{Message: msg}, nil
}

// EventMark: the baseline was marked.
const EventMark EventKind = "mark"
