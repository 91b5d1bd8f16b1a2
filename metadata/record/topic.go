package record

// TopicRecord (apiKey 2, version 0) creates a topic; its partitions follow
// as PartitionRecords.
type TopicRecord struct {
	Version int16
	Name    string
	TopicID Uuid
}

// APIKey is KeyTopic.
func (*TopicRecord) APIKey() APIKey { return KeyTopic }

// RecordVersion is r.Version.
func (r *TopicRecord) RecordVersion() int16 { return r.Version }

func (r *TopicRecord) encode(w *writer) {
	w.string("Name", r.Name)
	w.uuid(r.TopicID)
	w.uvarint(0)
}

func (r *TopicRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.Name = rd.string("Name")
	r.TopicID = rd.uuid()
	rd.noTags()
}

// RemoveTopicRecord (apiKey 9, version 0) deletes a topic with all its
// partitions (and, on replay, its configs).
type RemoveTopicRecord struct {
	Version int16
	TopicID Uuid
}

// APIKey is KeyRemoveTopic.
func (*RemoveTopicRecord) APIKey() APIKey { return KeyRemoveTopic }

// RecordVersion is r.Version.
func (r *RemoveTopicRecord) RecordVersion() int16 { return r.Version }

func (r *RemoveTopicRecord) encode(w *writer) {
	w.uuid(r.TopicID)
	w.uvarint(0)
}

func (r *RemoveTopicRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.TopicID = rd.uuid()
	rd.noTags()
}
