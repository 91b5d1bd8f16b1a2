package controller

import (
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func alterConfigs(validateOnly bool, resources ...kmsg.IncrementalAlterConfigsRequestResource) *kmsg.IncrementalAlterConfigsRequest {
	r := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r.Version, r.ValidateOnly, r.Resources = 1, validateOnly, resources
	return r
}

func resource(typ kmsg.ConfigResourceType, name string, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsRequestResource {
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName, res.Configs = typ, name, ops
	return res
}

func op(o kmsg.IncrementalAlterConfigOp, name string, value *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Op, c.Name, c.Value = o, name, value
	return c
}

func (h *harness) config(typ int8, name, key string) (string, bool) {
	c := h.image().Configs().Resource(image.ConfigResource{Type: typ, Name: name})
	if c == nil {
		return "", false
	}
	return c.Get(key)
}

func TestIncrementalAlterConfigsWritesConfigRecords(t *testing.T) {
	h, _ := cluster(t, 3, Config{})
	h.createTopic("t", 2, 3)
	set, del := kmsg.IncrementalAlterConfigOpSet, kmsg.IncrementalAlterConfigOpDelete
	app, sub := kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract
	resp := h.do(alterConfigs(false,
		resource(kmsg.ConfigResourceTypeBroker, "102", op(set, "follower.replication.throttled.rate", kmsg.StringPtr("1048576"))),
		resource(kmsg.ConfigResourceTypeBroker, "", op(set, "leader.replication.throttled.rate", kmsg.StringPtr("2048"))),
		resource(kmsg.ConfigResourceTypeTopic, "t",
			op(set, "follower.replication.throttled.replicas", kmsg.StringPtr("0:102")),
			op(app, "leader.replication.throttled.replicas", kmsg.StringPtr("0:101,1:103")),
			op(set, "min.insync.replicas", kmsg.StringPtr("2"))),
	)).(*kmsg.IncrementalAlterConfigsResponse)
	for _, r := range resp.Resources {
		if r.ErrorCode != 0 {
			t.Fatalf("resource %d %q: error %d %v", r.ResourceType, r.ResourceName, r.ErrorCode, r.ErrorMessage)
		}
	}
	for _, c := range []struct {
		typ             int8
		name, key, want string
	}{
		{record.ResourceBroker, "102", "follower.replication.throttled.rate", "1048576"},
		{record.ResourceBroker, "", "leader.replication.throttled.rate", "2048"},
		{record.ResourceTopic, "t", "follower.replication.throttled.replicas", "0:102"},
		{record.ResourceTopic, "t", "leader.replication.throttled.replicas", "0:101,1:103"},
		{record.ResourceTopic, "t", "min.insync.replicas", "2"},
	} {
		if got, ok := h.config(c.typ, c.name, c.key); !ok || got != c.want {
			t.Errorf("%s of %q = %q, %v; want %q", c.key, c.name, got, ok, c.want)
		}
	}
	// APPEND adds only what is missing, SUBTRACT removes; DELETE removes
	// the key.
	h.do(alterConfigs(false, resource(kmsg.ConfigResourceTypeTopic, "t",
		op(app, "leader.replication.throttled.replicas", kmsg.StringPtr("1:103,1:102")),
		op(sub, "follower.replication.throttled.replicas", kmsg.StringPtr("0:102")),
		op(del, "min.insync.replicas", nil))))
	if got, _ := h.config(record.ResourceTopic, "t", "leader.replication.throttled.replicas"); got != "0:101,1:103,1:102" {
		t.Errorf("after APPEND: %q", got)
	}
	if got, ok := h.config(record.ResourceTopic, "t", "follower.replication.throttled.replicas"); !ok || got != "" {
		t.Errorf("after SUBTRACT: %q, %v", got, ok)
	}
	if _, ok := h.config(record.ResourceTopic, "t", "min.insync.replicas"); ok {
		t.Error("min.insync.replicas still set after DELETE")
	}
	// An unchanged topic config writes nothing; a broker's is written
	// anyway (KAFKA-14136) so that brokers reload it.
	before := len(h.records())
	h.do(alterConfigs(false, resource(kmsg.ConfigResourceTypeTopic, "t", op(set, "leader.replication.throttled.replicas", kmsg.StringPtr("0:101,1:103,1:102")))))
	if n := len(h.records()) - before; n != 0 {
		t.Errorf("an unchanged topic config wrote %d records", n)
	}
	h.do(alterConfigs(false, resource(kmsg.ConfigResourceTypeBroker, "", op(set, "leader.replication.throttled.rate", kmsg.StringPtr("2048")))))
	if n := len(h.records()) - before; n != 1 {
		t.Errorf("an unchanged broker config wrote %d records, want 1", n)
	}
	// ValidateOnly checks and writes nothing.
	before = len(h.records())
	resp = h.do(alterConfigs(true, resource(kmsg.ConfigResourceTypeBroker, "", op(set, "follower.replication.throttled.rate", kmsg.StringPtr("1"))))).(*kmsg.IncrementalAlterConfigsResponse)
	if resp.Resources[0].ErrorCode != 0 || len(h.records()) != before {
		t.Errorf("validate only: %+v, %d records written", resp.Resources[0], len(h.records())-before)
	}
}

func TestIncrementalAlterConfigsErrors(t *testing.T) {
	h, _ := cluster(t, 1, Config{})
	h.createTopic("t", 1, 1)
	set, app := kmsg.IncrementalAlterConfigOpSet, kmsg.IncrementalAlterConfigOpAppend
	topic := func(ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsRequestResource {
		return resource(kmsg.ConfigResourceTypeTopic, "t", ops...)
	}
	broker := func(ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsRequestResource {
		return resource(kmsg.ConfigResourceTypeBroker, "", ops...)
	}
	cases := []struct {
		res  kmsg.IncrementalAlterConfigsRequestResource
		code int16
		msg  string
	}{
		{resource(kmsg.ConfigResourceTypeTopic, "nope", op(set, "min.insync.replicas", kmsg.StringPtr("1"))), kerr.UnknownTopicOrPartition.Code, "The topic 'nope' does not exist."},
		{resource(kmsg.ConfigResourceTypeBroker, "abc"), kerr.InvalidRequest.Code, `Illegal broker ID "abc": a broker resource is a broker's id, or empty for the cluster default.`},
		{resource(kmsg.ConfigResourceTypeBrokerLogger, "101"), kerr.InvalidRequest.Code, "Unsupported resource type 8: kraftlab's controller alters BROKER (4) and TOPIC (2) configs."},
		{topic(op(set, "a", kmsg.StringPtr("1")), op(set, "a", kmsg.StringPtr("2"))), kerr.InvalidRequest.Code, "Duplicate alterConfigs operation for key a."},
		{topic(op(set, "a", nil)), kerr.InvalidRequest.Code, "Null value not supported for SET of a."},
		{topic(op(app, "min.insync.replicas", kmsg.StringPtr("2"))), kerr.InvalidConfig.Code, "Can't APPEND to key min.insync.replicas because its type is not LIST."},
		{topic(op(7, "a", kmsg.StringPtr("1"))), kerr.InvalidRequest.Code, "Unknown config operation 7 for a."},
		{topic(op(set, "min.insync.replicas", kmsg.StringPtr("0"))), kerr.InvalidConfig.Code, "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"},
		{topic(op(set, "unclean.leader.election.enable", kmsg.StringPtr("maybe"))), kerr.InvalidConfig.Code, "Invalid value maybe for configuration unclean.leader.election.enable: Expected value to be either true or false"},
		{topic(op(set, "leader.replication.throttled.replicas", kmsg.StringPtr("0:101,x"))), kerr.InvalidConfig.Code,
			"Invalid value [0:101, x] for configuration leader.replication.throttled.replicas: leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."},
		{topic(op(set, "leader.replication.throttled.rate", kmsg.StringPtr("5"))), kerr.InvalidConfig.Code, "Unknown topic config name: leader.replication.throttled.rate"},
		{broker(op(set, "follower.replication.throttled.rate", kmsg.StringPtr("-1"))), kerr.InvalidConfig.Code, "Invalid value -1 for configuration follower.replication.throttled.rate: Value must be at least 0"},
		{broker(op(set, "follower.replication.throttled.rate", kmsg.StringPtr("fast"))), kerr.InvalidConfig.Code, "Invalid value fast for configuration follower.replication.throttled.rate: Not a number of type LONG"},
		{broker(op(set, "follower.replication.throttled.replicas", kmsg.StringPtr("*"))), kerr.InvalidConfig.Code, "follower.replication.throttled.replicas is a topic config, not a broker config"},
	}
	before := len(h.records())
	for _, c := range cases {
		resp := h.do(alterConfigs(false, c.res)).(*kmsg.IncrementalAlterConfigsResponse)
		r := resp.Resources[0]
		if r.ErrorCode != c.code || r.ErrorMessage == nil || *r.ErrorMessage != c.msg {
			t.Errorf("%d %q %+v: error %d %v, want %d %q", c.res.ResourceType, c.res.ResourceName, c.res.Configs, r.ErrorCode, r.ErrorMessage, c.code, c.msg)
		}
	}
	dup := topic(op(set, "min.insync.replicas", kmsg.StringPtr("1")))
	resp := h.do(alterConfigs(false, dup, dup)).(*kmsg.IncrementalAlterConfigsResponse)
	for _, r := range resp.Resources {
		if r.ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("duplicate resource: error %d", r.ErrorCode)
		}
	}
	if n := len(h.records()) - before; n != 0 {
		t.Errorf("refused changes wrote %d records", n)
	}
	// "*" is a valid list.
	if r := h.do(alterConfigs(false, topic(op(set, "follower.replication.throttled.replicas", kmsg.StringPtr(" * "))))).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]; r.ErrorCode != 0 {
		t.Errorf("'*': error %d %v", r.ErrorCode, r.ErrorMessage)
	}
}
