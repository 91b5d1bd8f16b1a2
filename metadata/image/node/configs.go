package node

import (
	"strings"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// resourceTypes are ConfigResource.Type's names, in the enum's order,
// which is the order Kafka tries them when it reads a child name (so
// BROKER_LOGGER is tried before BROKER).
var resourceTypes = []struct {
	name string
	id   int8
}{
	{"GROUP", record.ResourceGroup},
	{"CLIENT_METRICS", record.ResourceClientMetrics},
	{"BROKER_LOGGER", record.ResourceBrokerLogger},
	{"BROKER", record.ResourceBroker},
	{"TOPIC", record.ResourceTopic},
	{"UNKNOWN", record.ResourceUnknown},
}

func resourceTypeName(id int8) (string, bool) {
	for _, t := range resourceTypes {
		if t.id == id {
			return t.name, true
		}
	}
	return "", false
}

// configsNode is /image/configs (Kafka's ConfigurationsImageNode): a
// directory per resource, "TYPE:name", or "TYPE" for the type's default
// resource (empty name).
type configsNode struct {
	dir
	c *image.ConfigurationsImage
}

func (n configsNode) ChildNames() []string {
	var names []string
	for r := range n.c.Resources() {
		t, ok := resourceTypeName(r.Type)
		if !ok {
			continue // no name Kafka could print or look up
		}
		if r.Name == "" {
			names = append(names, t)
		} else {
			names = append(names, t+":"+r.Name)
		}
	}
	return names
}

// resourceFromName is ConfigurationsImageNode.resourceFromName: the first
// type whose name starts the child name, followed by nothing or ":name".
func resourceFromName(name string) (image.ConfigResource, bool) {
	for _, t := range resourceTypes {
		rest, ok := strings.CutPrefix(name, t.name)
		if !ok {
			continue
		}
		if rest == "" {
			return image.ConfigResource{Type: t.id}, true
		}
		if n, ok := strings.CutPrefix(rest, ":"); ok {
			return image.ConfigResource{Type: t.id, Name: n}, true
		}
		return image.ConfigResource{}, false
	}
	return image.ConfigResource{}, false
}

func (n configsNode) Child(name string) Node {
	r, ok := resourceFromName(name)
	if !ok {
		return nil
	}
	if c := n.c.Resource(r); c != nil {
		return configNode{c: c}
	}
	return nil
}

func (n configsNode) Print(p Printer) { printChildren(n, p) }

// configNode is one resource's configs (ConfigurationImageNode): a file
// per key.
type configNode struct {
	dir
	c *image.ConfigurationImage
}

func (n configNode) ChildNames() []string { return n.c.Keys() }

func (n configNode) Child(name string) Node {
	v, ok := n.c.Get(name)
	if !ok {
		return nil
	}
	return configValue{resourceType: n.c.Resource().Type, key: name, value: v}
}

func (n configNode) Print(p Printer) { printChildren(n, p) }

// configValue is one config's value, which the printer may redact: Kafka's
// NodeStringifier hides every value, the shell none. (Kafka's Normal
// criteria hide sensitive keys, such as passwords; kraftlab has none.)
type configValue struct {
	resourceType int8
	key, value   string
}

func (configValue) IsDirectory() bool    { return false }
func (configValue) ChildNames() []string { return nil }
func (configValue) Child(string) Node    { return nil }

func (c configValue) Print(p Printer) {
	if p.RedactConfig(c.resourceType, c.key) {
		p.Output(Redacted)
		return
	}
	p.Output(c.value)
}
