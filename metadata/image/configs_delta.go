package image

import (
	"maps"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// ConfigurationsDelta collects config changes by resource.
type ConfigurationsDelta struct {
	image   *ConfigurationsImage
	changes map[ConfigResource]map[string]*string // nil value: deleted
}

func newConfigurationsDelta(img *ConfigurationsImage) *ConfigurationsDelta {
	return &ConfigurationsDelta{image: img, changes: map[ConfigResource]map[string]*string{}}
}

func (d *ConfigurationsDelta) resource(r ConfigResource) map[string]*string {
	c := d.changes[r]
	if c == nil {
		c = map[string]*string{}
		d.changes[r] = c
	}
	return c
}

func (d *ConfigurationsDelta) replay(r *record.ConfigRecord) {
	d.resource(ConfigResource{Type: r.ResourceType, Name: r.ResourceName})[r.Name] = r.Value
}

// deleteAll drops every config of r (a removed topic's).
func (d *ConfigurationsDelta) deleteAll(r ConfigResource) {
	c := d.resource(r)
	clear(c)
	if ci := d.image.Resource(r); ci != nil {
		for k := range ci.data {
			c[k] = nil
		}
	}
}

func (d *ConfigurationsDelta) finishSnapshot() {
	for r, ci := range d.image.resources.All() {
		c := d.resource(r)
		for k := range ci.data {
			if _, ok := c[k]; !ok {
				c[k] = nil
			}
		}
	}
}

func (d *ConfigurationsDelta) apply() *ConfigurationsImage {
	b := d.image.resources.Builder()
	for r, changes := range d.changes {
		var data map[string]string
		if ci := d.image.Resource(r); ci != nil {
			data = maps.Clone(ci.data)
		} else {
			data = map[string]string{}
		}
		for k, v := range changes {
			if v == nil {
				delete(data, k)
			} else {
				data[k] = *v
			}
		}
		if len(data) == 0 {
			b.Delete(r)
		} else {
			b.Set(r, &ConfigurationImage{resource: r, data: data})
		}
	}
	return &ConfigurationsImage{resources: b.Map()}
}
