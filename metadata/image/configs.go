package image

import (
	"cmp"
	"iter"
	"maps"
	"slices"

	"github.com/kraftlab/kraftlab/metadata/internal/pmap"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// ConfigResource names what a config applies to (Kafka's ConfigResource):
// a type (record.ResourceTopic, record.ResourceBroker, …) and a name; a
// broker resource with an empty name holds the cluster-wide defaults.
type ConfigResource struct {
	Type int8
	Name string
}

// ConfigurationImage holds one resource's dynamic configs, key to value.
type ConfigurationImage struct {
	resource ConfigResource
	data     map[string]string
}

// Resource is what the configs apply to.
func (c *ConfigurationImage) Resource() ConfigResource { return c.resource }

// Get returns the value of key.
func (c *ConfigurationImage) Get(key string) (string, bool) {
	v, ok := c.data[key]
	return v, ok
}

// Keys lists the keys set, sorted.
func (c *ConfigurationImage) Keys() []string { return slices.Sorted(maps.Keys(c.data)) }

// Len is the number of keys set.
func (c *ConfigurationImage) Len() int { return len(c.data) }

// ConfigurationsImage holds the configs of every resource that has some.
type ConfigurationsImage struct {
	resources pmap.Map[ConfigResource, *ConfigurationImage]
}

var emptyConfigs = &ConfigurationsImage{resources: noConfigs}

// Resource returns the configs of r, nil if it has none.
func (c *ConfigurationsImage) Resource(r ConfigResource) *ConfigurationImage {
	ci, _ := c.resources.Get(r)
	return ci
}

// Resources yields every resource with configs, in no particular order.
func (c *ConfigurationsImage) Resources() iter.Seq2[ConfigResource, *ConfigurationImage] {
	return c.resources.All()
}

// sortedResources lists the resources by type, then name.
func (c *ConfigurationsImage) sortedResources() []ConfigResource {
	return slices.SortedFunc(keysOf(c.resources.All()), func(a, b ConfigResource) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Name, b.Name))
	})
}

// IsEmpty reports whether no resource has configs.
func (c *ConfigurationsImage) IsEmpty() bool { return c.resources.Len() == 0 }

// Equal reports whether two images hold the same configs.
func (c *ConfigurationsImage) Equal(o *ConfigurationsImage) bool {
	if c.resources.Len() != o.resources.Len() {
		return false
	}
	for r, ci := range c.resources.All() {
		oi, ok := o.resources.Get(r)
		if !ok || !maps.Equal(ci.data, oi.data) {
			return false
		}
	}
	return true
}

func (c *ConfigurationsImage) records() []record.Record {
	var out []record.Record
	for _, r := range c.sortedResources() {
		ci := c.Resource(r)
		for _, k := range ci.Keys() {
			v := ci.data[k]
			out = append(out, &record.ConfigRecord{ResourceType: r.Type, ResourceName: r.Name, Name: k, Value: &v})
		}
	}
	return out
}
