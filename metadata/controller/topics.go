package controller

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxPartitionsPerRequest is Kafka's MAX_PARTITIONS_PER_BATCH: a request
// that could create more is refused whole before anything is allocated.
const maxPartitionsPerRequest = 10_000

// apiError is one topic's refusal: a Kafka error and its message.
type apiError struct {
	err *kerr.Error
	msg string
}

func refuse(e *kerr.Error, format string, args ...any) *apiError {
	return &apiError{err: e, msg: fmt.Sprintf(format, args...)}
}

func (e *apiError) code() int16 {
	if e == nil {
		return 0
	}
	return e.err.Code
}

func (e *apiError) message() *string {
	if e == nil {
		return nil
	}
	return &e.msg
}

// createTopics is Kafka's ReplicationControlManager.createTopics: each
// topic succeeds or fails on its own; the records of those that succeed go
// in one batch.
func (c *QuorumController) createTopics(r *kmsg.CreateTopicsRequest) outcome {
	resp := kmsg.NewPtrCreateTopicsResponse()
	o := outcome{resp: resp}
	var total int64
	for _, t := range r.Topics {
		switch {
		case len(t.ReplicaAssignment) > 0:
			total += int64(len(t.ReplicaAssignment))
		case t.NumPartitions == -1:
			total += int64(c.cfg.DefaultNumPartitions)
		case t.NumPartitions > 0:
			total += int64(t.NumPartitions)
		}
	}
	if total > maxPartitionsPerRequest {
		o.resp = errorResponse(r, kerr.PolicyViolation.Code, "Excessively large number of partitions per request.")
		return o
	}
	img := c.st.working
	v := c.versions(img)
	pl := newPlacer(img, c.cfg.Rand)
	d := image.NewMetadataDelta(img) // checks the request's records against each other
	names := newTopicNames(img)
	counts := newReplicaCounts(img, c.cfg.MaxBrokerPartitions)
	seen := map[string]int{}
	for _, t := range r.Topics {
		seen[t.Topic]++
	}
	for _, t := range r.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = t.Topic, -1, -1
		// Never null: Kafka's admin client (v5+) reads the list of every
		// result, failed ones too, and a null one fails createTopics.
		rt.Configs = []kmsg.CreateTopicsResponseTopicConfig{}
		var recs []record.Record
		var aerr *apiError
		if seen[t.Topic] > 1 {
			aerr = refuse(kerr.InvalidRequest, "Duplicate topic name.")
		} else {
			recs, aerr = c.createTopic(img, names, v, pl, t)
		}
		if aerr == nil {
			aerr = counts.admit(recs)
		}
		if aerr == nil {
			for _, rec := range recs {
				if err := d.Replay(rec); err != nil {
					aerr = refuse(kerr.UnknownServerError, "%v", err)
					break
				}
			}
		}
		if aerr != nil {
			rt.ErrorCode, rt.ErrorMessage = aerr.code(), aerr.message()
			c.log.Info("refusing to create topic", "topic", t.Topic, "error", aerr.err.Message, "why", aerr.msg)
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		names.add(t.Topic)
		tr := recs[0].(*record.TopicRecord)
		parts := recs[1].(*record.PartitionRecord)
		rt.TopicID = tr.TopicID
		rt.NumPartitions, rt.ReplicationFactor = countPartitions(recs), int16(len(parts.Replicas))
		rt.Configs = createdConfigs(recs)
		resp.Topics = append(resp.Topics, rt)
		if r.ValidateOnly {
			continue
		}
		o.records = append(o.records, recs...)
		o.events = append(o.events, Event{Kind: EventTopicCreated, Topic: t.Topic, TopicID: tr.TopicID, Partitions: rt.NumPartitions})
	}
	return o
}

// createdConfigs lists the configs a new topic sets, by name, as Kafka's
// answer lists the effective ones. kraftlab has no config schema, so the
// defaults Kafka adds (DEFAULT_CONFIG) are left out.
func createdConfigs(recs []record.Record) []kmsg.CreateTopicsResponseTopicConfig {
	out := []kmsg.CreateTopicsResponseTopicConfig{}
	for _, r := range recs {
		if cr, ok := r.(*record.ConfigRecord); ok {
			c := kmsg.NewCreateTopicsResponseTopicConfig()
			c.Name, c.Value, c.Source = cr.Name, cr.Value, configSourceDynamicTopic
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b kmsg.CreateTopicsResponseTopicConfig) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// configSourceDynamicTopic is Kafka's DescribeConfigsResponse
// ConfigSource DYNAMIC_TOPIC_CONFIG: a config set on the topic itself.
const configSourceDynamicTopic int8 = 1

func countPartitions(recs []record.Record) int32 {
	var n int32
	for _, r := range recs {
		if _, ok := r.(*record.PartitionRecord); ok {
			n++
		}
	}
	return n
}

// createTopic checks one topic against img and the names taken (the
// image's and the request's earlier topics) and returns its records: the
// TopicRecord, a PartitionRecord per partition, a ConfigRecord per config.
func (c *QuorumController) createTopic(img *image.MetadataImage, names *topicNames, v versions, pl *placer, t kmsg.CreateTopicsRequestTopic) ([]record.Record, *apiError) {
	if err := ValidateTopicName(t.Topic); err != nil {
		return nil, refuse(kerr.InvalidTopicException, "%v", err)
	}
	if t.Topic == raft.MetadataTopic {
		// ControllerApis refuses it before the controller sees it: the
		// name is the metadata log's own partition folder.
		return nil, refuse(kerr.InvalidRequest, "Creation of internal topic %s is prohibited.", raft.MetadataTopic)
	}
	if names.has(t.Topic) {
		return nil, refuse(kerr.TopicAlreadyExists, "Topic '%s' already exists.", t.Topic)
	}
	if other := names.colliding(t.Topic); other != "" {
		return nil, refuse(kerr.InvalidTopicException, "Topic '%s' collides with existing topic: %s", t.Topic, other)
	}
	id := randomTopicID(c.cfg.Rand)
	recs := []record.Record{&record.TopicRecord{Name: t.Topic, TopicID: id}}
	if len(t.ReplicaAssignment) > 0 {
		if t.NumPartitions != -1 {
			return nil, refuse(kerr.InvalidRequest, "A manual partition assignment was specified, but numPartitions was not set to -1.")
		}
		if t.ReplicationFactor != -1 {
			return nil, refuse(kerr.InvalidRequest, "A manual partition assignment was specified, but replicationFactor was not set to -1.")
		}
		parts, aerr := manualPartitions(img, v, id, 0, t.ReplicaAssignment)
		if aerr != nil {
			return nil, aerr
		}
		recs = append(recs, parts...)
	} else {
		n, rf := t.NumPartitions, int(t.ReplicationFactor)
		if n == -1 {
			n = c.cfg.DefaultNumPartitions
		}
		if rf == -1 {
			rf = int(c.cfg.DefaultReplicationFactor)
		}
		if n <= 0 {
			return nil, refuse(kerr.InvalidPartitions, "Number of partitions was set to an invalid non-positive value.")
		}
		if rf <= 0 {
			return nil, refuse(kerr.InvalidReplicationFactor, "Replication factor must be larger than 0, or -1 to use the default value.")
		}
		if err := pl.check(rf); err != nil {
			return nil, refuse(kerr.InvalidReplicationFactor, "%v", err)
		}
		for i := range n {
			p, ok := newPartition(img, v, id, i, pl.place(int(i), rf))
			if !ok {
				return nil, refuse(kerr.InvalidReplicationFactor, "no usable broker for partition %d", i)
			}
			recs = append(recs, p)
		}
	}
	seen := map[string]bool{}
	for _, cfg := range t.Configs {
		if cfg.Name == "" || cfg.Value == nil || seen[cfg.Name] {
			return nil, refuse(kerr.InvalidConfig, "Invalid config %q: a name must be given once, with a value.", cfg.Name)
		}
		seen[cfg.Name] = true
		if aerr := validateConfig(record.ResourceTopic, cfg.Name, *cfg.Value); aerr != nil {
			return nil, aerr
		}
		recs = append(recs, &record.ConfigRecord{ResourceType: record.ResourceTopic, ResourceName: t.Topic, Name: cfg.Name, Value: cfg.Value})
	}
	return recs, nil
}

// manualPartitions checks replica assignments given by the request for
// partitions first, first+1, … (Kafka's validateManualPartitionAssignment).
func manualPartitions(img *image.MetadataImage, v versions, topic record.Uuid, first int32, assignments []kmsg.CreateTopicsRequestTopicReplicaAssignment) ([]record.Record, *apiError) {
	var recs []record.Record
	rf := -1
	for i, a := range assignments {
		want := first + int32(i)
		if a.Partition != want {
			return nil, refuse(kerr.InvalidReplicaAssignment, "Partitions should be numbered consecutively starting at 0; partition %d is out of order.", a.Partition)
		}
		if aerr := checkReplicas(img, a.Replicas, want); aerr != nil {
			return nil, aerr
		}
		if rf >= 0 && len(a.Replicas) != rf {
			return nil, refuse(kerr.InvalidReplicaAssignment, "The manual partition assignment includes a partition with %d replica(s), but this is not consistent with previous partitions, which have %d replica(s).", len(a.Replicas), rf)
		}
		rf = len(a.Replicas)
		p, ok := newPartition(img, v, topic, want, slices.Clone(a.Replicas))
		if !ok {
			return nil, refuse(kerr.InvalidReplicaAssignment, "All brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown.", want)
		}
		recs = append(recs, p)
	}
	return recs, nil
}

// checkReplicas refuses an empty assignment, a duplicate or an unregistered
// broker (INVALID_REPLICA_ASSIGNMENT).
func checkReplicas(img *image.MetadataImage, replicas []int32, partition int32) *apiError {
	if len(replicas) == 0 {
		return refuse(kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list.")
	}
	seen := map[int32]bool{}
	for _, r := range replicas {
		if seen[r] {
			return refuse(kerr.InvalidReplicaAssignment, "The manual partition assignment for partition %d includes the broker %d more than once.", partition, r)
		}
		seen[r] = true
		if img.Cluster().Broker(r) == nil {
			return refuse(kerr.InvalidReplicaAssignment, "The manual partition assignment includes broker %d, but no such broker is registered.", r)
		}
	}
	return nil
}

// deleteTopics is Kafka's deleteTopics: by name (v1–5, or v6 with a name)
// or by id (v6); each topic gets a RemoveTopicRecord.
func (c *QuorumController) deleteTopics(r *kmsg.DeleteTopicsRequest) outcome {
	resp := kmsg.NewPtrDeleteTopicsResponse()
	o := outcome{resp: resp}
	img := c.st.working
	type target struct {
		name *string
		id   record.Uuid
	}
	var targets []target
	for _, n := range r.TopicNames {
		targets = append(targets, target{name: kmsg.StringPtr(n)})
	}
	for _, t := range r.Topics {
		targets = append(targets, target{name: t.Topic, id: t.TopicID})
	}
	names, ids := map[string]int{}, map[record.Uuid]int{}
	for _, t := range targets {
		if t.name != nil {
			names[*t.name]++
		} else {
			ids[t.id]++
		}
	}
	removed := map[record.Uuid]bool{}
	for _, t := range targets {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID = t.name, t.id
		var topic *image.TopicImage
		var aerr *apiError
		switch {
		case t.name != nil && t.id != record.ZeroUuid:
			aerr = refuse(kerr.InvalidRequest, "You may not specify both topic name and topic id.")
		case t.name != nil && names[*t.name] > 1:
			aerr = refuse(kerr.InvalidRequest, "Duplicate topic name.")
		case t.name == nil && ids[t.id] > 1:
			aerr = refuse(kerr.InvalidRequest, "Duplicate topic id.")
		case t.name != nil:
			if topic = img.Topics().TopicByName(*t.name); topic == nil {
				aerr = refuse(kerr.UnknownTopicOrPartition, "This server does not host this topic-partition.")
			}
		default:
			if topic = img.Topics().Topic(t.id); topic == nil {
				aerr = refuse(kerr.UnknownTopicID, "This server does not host this topic ID.")
			}
		}
		if aerr == nil && removed[topic.ID()] {
			aerr = refuse(kerr.InvalidRequest, "The topic is named twice, by name and by id.")
		}
		if aerr != nil {
			rt.ErrorCode, rt.ErrorMessage = aerr.code(), aerr.message()
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		removed[topic.ID()] = true
		rt.Topic, rt.TopicID = kmsg.StringPtr(topic.Name()), topic.ID()
		resp.Topics = append(resp.Topics, rt)
		o.records = append(o.records, &record.RemoveTopicRecord{TopicID: topic.ID()})
		o.events = append(o.events, Event{Kind: EventTopicDeleted, Topic: topic.Name(), TopicID: topic.ID()})
	}
	return o
}

// createPartitions is Kafka's createPartitions: a topic grows to Count
// partitions, placed like a new topic's with the replication factor of its
// first partition, or as the request assigns them.
func (c *QuorumController) createPartitions(r *kmsg.CreatePartitionsRequest) outcome {
	resp := kmsg.NewPtrCreatePartitionsResponse()
	o := outcome{resp: resp}
	img := c.st.working
	var total int64
	for _, t := range r.Topics {
		if tp := img.Topics().TopicByName(t.Topic); tp != nil && int64(t.Count) > int64(tp.NumPartitions()) {
			total += int64(t.Count) - int64(tp.NumPartitions())
		}
	}
	if total > maxPartitionsPerRequest {
		o.resp = errorResponse(r, kerr.PolicyViolation.Code, "Excessively large number of partitions per request.")
		return o
	}
	v := c.versions(img)
	pl := newPlacer(img, c.cfg.Rand)
	counts := newReplicaCounts(img, c.cfg.MaxBrokerPartitions)
	seen := map[string]int{}
	for _, t := range r.Topics {
		seen[t.Topic]++
	}
	for _, t := range r.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		var recs []record.Record
		var aerr *apiError
		if seen[t.Topic] > 1 {
			aerr = refuse(kerr.InvalidRequest, "Duplicate topic name.")
		} else {
			recs, aerr = createPartitionsOf(img, v, pl, t)
		}
		if aerr == nil {
			aerr = counts.admit(recs)
		}
		if aerr != nil {
			rt.ErrorCode, rt.ErrorMessage = aerr.code(), aerr.message()
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		resp.Topics = append(resp.Topics, rt)
		if r.ValidateOnly {
			continue
		}
		o.records = append(o.records, recs...)
		tp := img.Topics().TopicByName(t.Topic)
		o.events = append(o.events, Event{Kind: EventPartitionsCreated, Topic: t.Topic, TopicID: tp.ID(), Partitions: t.Count})
	}
	return o
}

func createPartitionsOf(img *image.MetadataImage, v versions, pl *placer, t kmsg.CreatePartitionsRequestTopic) ([]record.Record, *apiError) {
	tp := img.Topics().TopicByName(t.Topic)
	if tp == nil {
		return nil, refuse(kerr.UnknownTopicOrPartition, "This server does not host this topic-partition.")
	}
	have := int32(tp.NumPartitions())
	switch {
	case t.Count < have:
		return nil, refuse(kerr.InvalidPartitions, "The topic %s currently has %d partition(s); %d would not be an increase.", t.Topic, have, t.Count)
	case t.Count == have:
		return nil, refuse(kerr.InvalidPartitions, "Topic already has %d partition(s).", have)
	}
	add := t.Count - have
	if t.Assignment != nil && int32(len(t.Assignment)) != add {
		return nil, refuse(kerr.InvalidReplicaAssignment, "Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", add, len(t.Assignment))
	}
	if t.Assignment != nil {
		as := make([]kmsg.CreateTopicsRequestTopicReplicaAssignment, len(t.Assignment))
		for i, a := range t.Assignment {
			as[i] = kmsg.CreateTopicsRequestTopicReplicaAssignment{Partition: have + int32(i), Replicas: a.Replicas}
		}
		return manualPartitions(img, v, tp.ID(), have, as)
	}
	rf := 1
	if p0 := tp.Partition(0); p0 != nil {
		rf = len(p0.Replicas)
	}
	if err := pl.check(rf); err != nil {
		return nil, refuse(kerr.InvalidReplicationFactor, "%v", err)
	}
	var recs []record.Record
	for i := range add {
		p, ok := newPartition(img, v, tp.ID(), have+i, pl.place(int(have+i), rf))
		if !ok {
			return nil, refuse(kerr.InvalidReplicationFactor, "no usable broker for partition %d", have+i)
		}
		recs = append(recs, p)
	}
	return recs, nil
}
