package cache

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func configRecord(typ int8, name, key, value string) *record.ConfigRecord {
	return &record.ConfigRecord{ResourceType: typ, ResourceName: name, Name: key, Value: str(value)}
}

func describeConfigs(version int16, synonyms bool, resources ...kmsg.DescribeConfigsRequestResource) *kmsg.DescribeConfigsRequest {
	r := kmsg.NewPtrDescribeConfigsRequest()
	r.Version, r.IncludeSynonyms, r.Resources = version, synonyms, resources
	return r
}

func resource(typ kmsg.ConfigResourceType, name string, keys ...string) kmsg.DescribeConfigsRequestResource {
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.ConfigNames = typ, name, keys
	return r
}

func TestDescribeConfigsFromTheImage(t *testing.T) {
	img := replay(t, testImage(t),
		configRecord(record.ResourceTopic, "orders", "retention.ms", "1000"),
		configRecord(record.ResourceTopic, "orders", "cleanup.policy", "compact"),
		configRecord(record.ResourceBroker, "", "log.retention.ms", "5000"),
		configRecord(record.ResourceBroker, "101", "background.threads", "4"),
	)
	type entry struct {
		name, value string
		source      kmsg.ConfigSource
	}
	for _, tc := range []struct {
		name    string
		res     kmsg.DescribeConfigsRequestResource
		code    int16
		msg     string
		entries []entry
	}{
		{"topic, all keys, sorted", resource(kmsg.ConfigResourceTypeTopic, "orders"), 0, "", []entry{
			{"cleanup.policy", "compact", kmsg.ConfigSourceDynamicTopicConfig}, {"retention.ms", "1000", kmsg.ConfigSourceDynamicTopicConfig}}},
		{"topic, named keys", resource(kmsg.ConfigResourceTypeTopic, "orders", "retention.ms", "segment.bytes"), 0, "", []entry{
			{"retention.ms", "1000", kmsg.ConfigSourceDynamicTopicConfig}}},
		{"topic without configs", resource(kmsg.ConfigResourceTypeTopic, "clicks"), 0, "", nil},
		{"unknown topic", resource(kmsg.ConfigResourceTypeTopic, "nope"), kerr.UnknownTopicOrPartition.Code, "", nil},
		{"cluster defaults", resource(kmsg.ConfigResourceTypeBroker, ""), 0, "", []entry{
			{"log.retention.ms", "5000", kmsg.ConfigSourceDynamicDefaultBrokerConfig}}},
		{"this broker", resource(kmsg.ConfigResourceTypeBroker, "101"), 0, "", []entry{
			{"background.threads", "4", kmsg.ConfigSourceDynamicBrokerConfig}}},
		{"another broker", resource(kmsg.ConfigResourceTypeBroker, "102"), kerr.InvalidRequest.Code,
			"Unexpected broker id, expected 101 or empty string, but received 102", nil},
		{"not a broker id", resource(kmsg.ConfigResourceTypeBroker, "x"), kerr.InvalidRequest.Code,
			"Unexpected broker id, expected 101 or empty string, but received x", nil},
		{"group", resource(kmsg.ConfigResourceType(record.ResourceGroup), "g"), kerr.InvalidRequest.Code, "Unsupported resource type: 32", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := DescribeConfigs(img, 101, describeConfigs(4, true, tc.res))
			if len(resp.Resources) != 1 {
				t.Fatalf("%d resources", len(resp.Resources))
			}
			r := resp.Resources[0]
			if r.ErrorCode != tc.code || r.ResourceType != tc.res.ResourceType || r.ResourceName != tc.res.ResourceName {
				t.Fatalf("answer %+v, want error %d", r, tc.code)
			}
			if (tc.msg == "") != (r.ErrorMessage == nil) || (r.ErrorMessage != nil && *r.ErrorMessage != tc.msg) {
				t.Fatalf("message %v, want %q", r.ErrorMessage, tc.msg)
			}
			if r.Configs == nil {
				t.Fatal("null configs")
			}
			var got []entry
			for _, c := range r.Configs {
				got = append(got, entry{c.Name, *c.Value, c.Source})
				if c.IsDefault || c.ReadOnly || len(c.ConfigSynonyms) != 1 || *c.ConfigSynonyms[0].Value != *c.Value {
					t.Errorf("%s: %+v", c.Name, c)
				}
			}
			if !slices.Equal(got, tc.entries) {
				t.Fatalf("configs %v, want %v", got, tc.entries)
			}
		})
	}
	t.Run("no synonyms unless asked", func(t *testing.T) {
		r := DescribeConfigs(img, 101, describeConfigs(1, false, resource(kmsg.ConfigResourceTypeTopic, "orders"))).Resources[0]
		if len(r.Configs) != 2 || len(r.Configs[0].ConfigSynonyms) != 0 {
			t.Fatalf("%+v", r.Configs)
		}
	})
}

// A topic is described with the same-name broker configs it does not set,
// as Kafka resolves them: this broker's dynamic value, else the cluster
// default (which the bootstrap of a cluster with ELR on writes for
// min.insync.replicas, so kafka-topics --describe prints it).
func TestDescribeTopicConfigsWithBrokerDefaults(t *testing.T) {
	img := replay(t, testImage(t),
		configRecord(record.ResourceTopic, "orders", "retention.ms", "1000"),
		configRecord(record.ResourceTopic, "clicks", "min.insync.replicas", "3"),
		configRecord(record.ResourceBroker, "", "min.insync.replicas", "2"),
		configRecord(record.ResourceBroker, "", "compression.type", "gzip"),
		configRecord(record.ResourceBroker, "101", "compression.type", "lz4"),
		configRecord(record.ResourceBroker, "", "log.retention.ms", "5000"),
	)
	got := func(topic string, keys ...string) string {
		var out []string
		for _, e := range DescribeConfigs(img, 101, describeConfigs(4, false, resource(kmsg.ConfigResourceTypeTopic, topic, keys...))).Resources[0].Configs {
			out = append(out, fmt.Sprintf("%s=%s(%d)", e.Name, *e.Value, e.Source))
		}
		return strings.Join(out, " ")
	}
	if g, want := got("orders"), "compression.type=lz4(2) min.insync.replicas=2(3) retention.ms=1000(1)"; g != want {
		t.Errorf("orders: %s, want %s", g, want)
	}
	if g, want := got("clicks"), "compression.type=lz4(2) min.insync.replicas=3(1)"; g != want {
		t.Errorf("clicks: %s, want %s", g, want)
	}
	if g, want := got("orders", "min.insync.replicas"), "min.insync.replicas=2(3)"; g != want {
		t.Errorf("orders, one key: %s, want %s", g, want)
	}
}
