package cluster

import (
	"sync"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// loadOrigins remembers who started each running load, for the views:
// the engine runs the loads, the playground knows where the actions came
// from. Key "" is the metadata load, any other a topic's; a stopped load
// is forgotten, so it holds at most MaxTopicLoads+1 entries.
type loadOrigins struct {
	mu sync.Mutex
	by map[string]view.Origin
}

// set records that by set the load of topic ("" the metadata load)
// running, or forgets it when it stopped.
func (o *loadOrigins) set(topic string, recordsPerSec int, by view.Origin) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if recordsPerSec == 0 {
		delete(o.by, topic)
		return
	}
	if o.by == nil {
		o.by = make(map[string]view.Origin)
	}
	o.by[topic] = by
}

// fill writes the origins into the view's running loads.
func (o *loadOrigins) fill(v *view.View) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if v.Load.On() {
		v.Load.StartedBy = o.by[""]
	}
	for i := range v.TopicLoads {
		v.TopicLoads[i].StartedBy = o.by[v.TopicLoads[i].Topic]
	}
}
