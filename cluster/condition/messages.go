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
