package condition

import (
	"fmt"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiName is API of held API: Kafka's name of a request, in any case.
var apiName = arg{help: "API", usage: "API",
	parse: func(c *Condition, s string) error {
		name, ok := kafkaAPI(s)
		if !ok {
			return fmt.Errorf("unknown API %q; want Kafka's name of a request, e.g. Fetch, Vote, BeginQuorumEpoch, CreateTopics", s)
		}
		c.field = name
		return nil
	},
	spell: func(c Condition) string { return c.field }}

// kafkaAPI returns Kafka's spelling of the API named s.
func kafkaAPI(s string) (string, bool) {
	for k := int16(0); k < 200; k++ {
		if name := kmsg.NameForKey(k); name != "" && strings.EqualFold(name, s) {
			return name, true
		}
	}
	return "", false
}

// heldAPI: a message of the API waits at the links.
func heldAPI(c Condition, v *view.View) (bool, string, error) {
	for _, m := range v.Messages {
		if m.API == c.field {
			return true, fmt.Sprintf("#%d %d→%d %s %s held", m.ID, m.From, m.To, m.API, m.Direction), nil
		}
	}
	if v.HeldMessages == 0 {
		return false, "the links hold no message", nil
	}
	return false, fmt.Sprintf("no %s among the %d held messages", c.field, v.HeldMessages), nil
}

// allParked: the leader holds a Fetch of every running follower and
// observer. With the clock paused that is the quorum at rest: nothing
// moves until a record is appended, and then each parked Fetch answers.
func allParked(_ Condition, v *view.View) (bool, string, error) {
	if v.LeaderID == view.NoLeader {
		return false, v.Summary(), nil
	}
	var parked, not []string
	for _, list := range [][]view.Replica{v.CurrentVoters, v.CurrentObservers} {
		for _, r := range list {
			if r.NodeID == v.LeaderID || r.State != view.StateRunning {
				continue
			}
			if r.ParkedFetch {
				parked = append(parked, fmt.Sprint(r.NodeID))
			} else {
				not = append(not, fmt.Sprint(r.NodeID))
			}
		}
	}
	saw := fmt.Sprintf("leader %d holds the Fetch of %s", v.LeaderID, orNone(parked))
	if len(not) > 0 {
		saw += "; not of " + strings.Join(not, ", ")
	}
	return len(not) == 0 && len(parked) > 0, saw, nil
}

func orNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}
