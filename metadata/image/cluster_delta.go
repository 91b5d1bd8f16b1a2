package image

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// ClusterDelta collects broker and controller registration changes.
type ClusterDelta struct {
	image              *ClusterImage
	changed            map[int32]*BrokerRegistration     // nil: unregistered
	changedControllers map[int32]*ControllerRegistration // nil: unregistered
}

func newClusterDelta(img *ClusterImage) *ClusterDelta {
	return &ClusterDelta{image: img, changed: map[int32]*BrokerRegistration{}, changedControllers: map[int32]*ControllerRegistration{}}
}

// Controller is controller id's registration as the delta has it, nil if
// none.
func (d *ClusterDelta) Controller(id int32) *ControllerRegistration {
	if c, ok := d.changedControllers[id]; ok {
		return c
	}
	return d.image.Controller(id)
}

func (d *ClusterDelta) replayRegisterController(r *record.RegisterControllerRecord) error {
	c, err := controllerFromRecord(r)
	if err != nil {
		return err
	}
	d.changedControllers[c.ID] = c
	return nil
}

// replayUnregisterController removes a registration; as in Kafka, one
// that is not there is no error.
func (d *ClusterDelta) replayUnregisterController(r *record.UnregisterControllerRecord) {
	d.changedControllers[r.ControllerID] = nil
}

// Broker is broker id's registration as the delta has it, nil if none.
func (d *ClusterDelta) Broker(id int32) *BrokerRegistration {
	if b, ok := d.changed[id]; ok {
		return b
	}
	return d.image.Broker(id)
}

// ChangedBrokers lists the ids of the brokers the delta registers, changes
// or unregisters, sorted.
func (d *ClusterDelta) ChangedBrokers() []int32 {
	return slices.Sorted(maps.Keys(d.changed))
}

func (d *ClusterDelta) registered(id int32, epoch int64, action string) (*BrokerRegistration, error) {
	b := d.Broker(id)
	if b == nil {
		return nil, fmt.Errorf("cannot %s broker %d: it is not registered", action, id)
	}
	if b.Epoch != epoch {
		return nil, fmt.Errorf("cannot %s broker %d at epoch %d: its registration has epoch %d", action, id, epoch, b.Epoch)
	}
	return b, nil
}

func (d *ClusterDelta) replayRegister(r *record.RegisterBrokerRecord) {
	d.changed[r.BrokerID] = brokerFromRecord(r)
}

func (d *ClusterDelta) replayUnregister(r *record.UnregisterBrokerRecord) error {
	if _, err := d.registered(r.BrokerID, r.BrokerEpoch, "unregister"); err != nil {
		return err
	}
	d.changed[r.BrokerID] = nil
	return nil
}

func (d *ClusterDelta) replayFence(id int32, epoch int64, fenced bool) error {
	action := "unfence"
	if fenced {
		action = "fence"
	}
	b, err := d.registered(id, epoch, action)
	if err != nil {
		return err
	}
	c := *b
	c.Fenced = fenced
	d.changed[id] = &c
	return nil
}

func (d *ClusterDelta) replayChange(r *record.BrokerRegistrationChangeRecord) error {
	b, err := d.registered(r.BrokerID, r.BrokerEpoch, "change")
	if err != nil {
		return err
	}
	c := *b
	switch r.Fenced {
	case record.FencingFence:
		c.Fenced = true
	case record.FencingUnfence:
		c.Fenced = false
	case record.FencingNoChange:
	default:
		return fmt.Errorf("unknown value %d of Fenced for broker %d", r.Fenced, r.BrokerID)
	}
	switch r.InControlledShutdown {
	case record.ControlledShutdownBegin:
		c.InControlledShutdown = true
	case record.ControlledShutdownNoChange:
	default:
		return fmt.Errorf("unknown value %d of InControlledShutdown for broker %d", r.InControlledShutdown, r.BrokerID)
	}
	if len(r.LogDirs) > 0 {
		c.Directories = r.LogDirs
	}
	if r.CordonedLogDirs != nil {
		c.CordonedDirectories = r.CordonedLogDirs
	}
	if !c.Equal(b) {
		d.changed[r.BrokerID] = &c
	}
	return nil
}

func (d *ClusterDelta) finishSnapshot() {
	for id := range d.image.brokers {
		if _, ok := d.changed[id]; !ok {
			d.changed[id] = nil
		}
	}
	for id := range d.image.controllers {
		if _, ok := d.changedControllers[id]; !ok {
			d.changedControllers[id] = nil
		}
	}
}

func (d *ClusterDelta) apply() *ClusterImage {
	next := maps.Clone(d.image.brokers)
	for id, b := range d.changed {
		if b == nil {
			delete(next, id)
		} else {
			next[id] = b
		}
	}
	controllers := d.image.controllers
	if len(d.changedControllers) > 0 {
		controllers = maps.Clone(controllers)
		for id, c := range d.changedControllers {
			if c == nil {
				delete(controllers, id)
			} else {
				controllers[id] = c
			}
		}
	}
	return &ClusterImage{brokers: next, controllers: controllers}
}
