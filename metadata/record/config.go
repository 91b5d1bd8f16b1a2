package record

// Config resource types (Kafka's ConfigResource.Type ids).
const (
	ResourceUnknown       int8 = 0
	ResourceTopic         int8 = 2
	ResourceBroker        int8 = 4
	ResourceBrokerLogger  int8 = 8
	ResourceClientMetrics int8 = 16
	ResourceGroup         int8 = 32
)

// ConfigRecord (apiKey 4, version 0) sets one configuration key of a
// resource (a topic, a broker, or the cluster default: a broker with an
// empty name). A nil Value deletes the key.
type ConfigRecord struct {
	Version      int16
	ResourceType int8
	ResourceName string
	Name         string
	Value        *string // nullable
}

// APIKey is KeyConfig.
func (*ConfigRecord) APIKey() APIKey { return KeyConfig }

// RecordVersion is r.Version.
func (r *ConfigRecord) RecordVersion() int16 { return r.Version }

func (r *ConfigRecord) encode(w *writer) {
	w.int8(r.ResourceType)
	w.string("ResourceName", r.ResourceName)
	w.string("Name", r.Name)
	w.nullableString("Value", r.Value)
	w.uvarint(0)
}

func (r *ConfigRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.ResourceType = rd.int8()
	r.ResourceName = rd.string("ResourceName")
	r.Name = rd.string("Name")
	r.Value = rd.nullableString("Value")
	rd.noTags()
}
