package controller

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Only Kafka 4.4's topic configs are taken, by CreateTopics and
// IncrementalAlterConfigs alike, with values of their type and a sane
// size; broker resources take the configs kraftlab acts on. The hostile
// review's made-up keys of 32,000 bytes write nothing.
func TestConfigsAreKafkasWithCheckedValues(t *testing.T) {
	h, _ := cluster(t, 3, Config{})
	h.createTopic("t", 1, 3)
	set := kmsg.IncrementalAlterConfigOpSet
	big := strings.Repeat("x", 32000)
	cases := []struct {
		typ        kmsg.ConfigResourceType
		name, key  string
		value      string
		code       int16
		msgContain string
	}{
		{kmsg.ConfigResourceTypeTopic, "t", "made.up.key", "1", kerr.InvalidConfig.Code, "Unknown topic config name: made.up.key"},
		{kmsg.ConfigResourceTypeTopic, "t", "retention.ms", big, kerr.InvalidConfig.Code, "at most 64 bytes"},
		{kmsg.ConfigResourceTypeTopic, "t", "retention.ms", "soon", kerr.InvalidConfig.Code, "Not a number of type LONG"},
		{kmsg.ConfigResourceTypeTopic, "t", "retention.ms", "-2", kerr.InvalidConfig.Code, "Value must be at least -1"},
		{kmsg.ConfigResourceTypeTopic, "t", "segment.bytes", "1024", kerr.InvalidConfig.Code, "Value must be at least 1048576"},
		{kmsg.ConfigResourceTypeTopic, "t", "segment.bytes", "4294967296", kerr.InvalidConfig.Code, "Not a number of type INT"},
		{kmsg.ConfigResourceTypeTopic, "t", "min.cleanable.dirty.ratio", "1.5", kerr.InvalidConfig.Code, "Value must be no more than 1"},
		{kmsg.ConfigResourceTypeTopic, "t", "cleanup.policy", "compact,shred", kerr.InvalidConfig.Code, "String must be one of: compact, delete"},
		{kmsg.ConfigResourceTypeTopic, "t", "compression.type", "brotli", kerr.InvalidConfig.Code, "String must be one of"},
		{kmsg.ConfigResourceTypeTopic, "t", "compression.gzip.level", "10", kerr.InvalidConfig.Code, "no more than 9"},
		{kmsg.ConfigResourceTypeTopic, "t", "preallocate", "yes", kerr.InvalidConfig.Code, "either true or false"},
		{kmsg.ConfigResourceTypeTopic, "t", "leader.replication.throttled.replicas", strings.Repeat("0:101,", 6000), kerr.InvalidConfig.Code, "at most 32767 bytes"},
		{kmsg.ConfigResourceTypeBroker, "", "made.up.key", "1", kerr.InvalidConfig.Code, "Unknown broker config name: made.up.key"},
		{kmsg.ConfigResourceTypeBroker, "101", "retention.ms", "1", kerr.InvalidConfig.Code, "retention.ms is a topic config, not a broker config"},
		{kmsg.ConfigResourceTypeTopic, "t", "retention.ms", "604800000", 0, ""},
		{kmsg.ConfigResourceTypeTopic, "t", "cleanup.policy", "compact, delete", 0, ""},
		{kmsg.ConfigResourceTypeTopic, "t", "compression.gzip.level", "-1", 0, ""},
		{kmsg.ConfigResourceTypeTopic, "t", "min.cleanable.dirty.ratio", "0.25", 0, ""},
		{kmsg.ConfigResourceTypeBroker, "", "min.insync.replicas", "2", 0, ""},
	}
	for _, c := range cases {
		before := len(h.records())
		resp := h.do(alterConfigs(false, resource(c.typ, c.name, op(set, c.key, kmsg.StringPtr(c.value))))).(*kmsg.IncrementalAlterConfigsResponse)
		r := resp.Resources[0]
		msg := ""
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		if r.ErrorCode != c.code || !strings.Contains(msg, c.msgContain) {
			t.Errorf("%s=%.20q: error %d %q, want %d containing %q", c.key, c.value, r.ErrorCode, msg, c.code, c.msgContain)
		}
		if c.code != 0 && len(h.records()) != before {
			t.Errorf("%s: a refused config wrote records", c.key)
		}
	}
	// CreateTopics checks the same.
	r := createTopic("u", 1, 1)
	r.Topics[0].Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "made.up.key", Value: kmsg.StringPtr(big)}}
	rt := h.do(r).(*kmsg.CreateTopicsResponse).Topics[0]
	if rt.ErrorCode != kerr.InvalidConfig.Code {
		t.Fatalf("CreateTopics with a made-up config: %+v", rt)
	}
	if h.image().Topics().TopicByName("u") != nil {
		t.Fatal("the topic was created")
	}
}
