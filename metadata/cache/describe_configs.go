package cache

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeConfigs answers a DescribeConfigsRequest from img for the broker
// nodeID, as Kafka 4.4's ConfigHelper.describeConfigs does, with the
// dynamic configs the metadata log holds:
//   - a topic: the configs set on it (DYNAMIC_TOPIC_CONFIG), with the
//     same-name broker configs it does not set (withBrokerDefaults), or
//     UNKNOWN_TOPIC_OR_PARTITION when the image has no such topic;
//   - the broker "" (cluster-wide defaults): DYNAMIC_DEFAULT_BROKER_CONFIG;
//   - this broker's id: its own dynamic configs (DYNAMIC_BROKER_CONFIG);
//     another broker's id is INVALID_REQUEST, as in Kafka;
//   - any other resource type: INVALID_REQUEST.
//
// kraftlab has no config schema, so the static and default values Kafka
// adds (STATIC_BROKER_CONFIG, DEFAULT_CONFIG) are not listed: a tool that
// prints only the non-default configs (kafka-topics --describe) prints
// what it would print against Kafka. ConfigNames, when not null,
// keeps only the keys named.
func DescribeConfigs(img *image.MetadataImage, nodeID int32, req *kmsg.DescribeConfigsRequest) *kmsg.DescribeConfigsResponse {
	resp := kmsg.NewPtrDescribeConfigsResponse()
	resp.Version = req.GetVersion()
	for _, r := range req.Resources {
		res := kmsg.NewDescribeConfigsResponseResource()
		res.ResourceType, res.ResourceName = r.ResourceType, r.ResourceName
		res.Configs = []kmsg.DescribeConfigsResponseResourceConfig{}
		var source kmsg.ConfigSource
		var fail *kerr.Error
		var msg string
		switch r.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			source = kmsg.ConfigSourceDynamicTopicConfig
			if img.Topics().TopicByName(r.ResourceName) == nil {
				fail = kerr.UnknownTopicOrPartition
			}
		case kmsg.ConfigResourceTypeBroker:
			source = kmsg.ConfigSourceDynamicDefaultBrokerConfig
			if r.ResourceName != "" {
				source = kmsg.ConfigSourceDynamicBrokerConfig
				if id, err := strconv.ParseInt(r.ResourceName, 10, 32); err != nil || int32(id) != nodeID {
					fail, msg = kerr.InvalidRequest, fmt.Sprintf("Unexpected broker id, expected %d or empty string, but received %s", nodeID, r.ResourceName)
				}
			}
		default:
			fail, msg = kerr.InvalidRequest, fmt.Sprintf("Unsupported resource type: %d", int8(r.ResourceType))
		}
		if fail != nil {
			res.ErrorCode = fail.Code
			if msg != "" {
				res.ErrorMessage = &msg
			}
			resp.Resources = append(resp.Resources, res)
			continue
		}
		res.Configs = configEntries(img, image.ConfigResource{Type: int8(r.ResourceType), Name: r.ResourceName}, r.ConfigNames, source, req.IncludeSynonyms)
		if r.ResourceType == kmsg.ConfigResourceTypeTopic {
			res.Configs = withBrokerDefaults(img, nodeID, res.Configs, r.ConfigNames, req.IncludeSynonyms)
		}
		resp.Resources = append(resp.Resources, res)
	}
	return resp
}

// sameNameTopicConfigs are the topic configs whose broker synonym has the
// same name (ServerTopicConfigSynonyms' sameName entries): where a topic
// does not set one, Kafka describes the broker's dynamic value, or the
// cluster default, as the topic's. The bootstrap of a cluster with ELR on
// sets the cluster's min.insync.replicas, so kafka-topics --describe
// prints it for every topic.
var sameNameTopicConfigs = []string{
	"compression.gzip.level", "compression.lz4.level", "compression.type", "compression.zstd.level",
	"min.insync.replicas", "unclean.leader.election.enable",
}

// withBrokerDefaults adds to a topic's entries the same-name broker
// configs it does not set: this broker's dynamic one
// (DYNAMIC_BROKER_CONFIG), else the cluster default
// (DYNAMIC_DEFAULT_BROKER_CONFIG); the entries stay in key order.
func withBrokerDefaults(img *image.MetadataImage, nodeID int32, entries []kmsg.DescribeConfigsResponseResourceConfig, keys []string, synonyms bool) []kmsg.DescribeConfigsResponseResourceConfig {
	set := map[string]bool{}
	for _, e := range entries {
		set[e.Name] = true
	}
	sources := []struct {
		res    image.ConfigResource
		source kmsg.ConfigSource
	}{
		{image.ConfigResource{Type: int8(kmsg.ConfigResourceTypeBroker), Name: strconv.Itoa(int(nodeID))}, kmsg.ConfigSourceDynamicBrokerConfig},
		{image.ConfigResource{Type: int8(kmsg.ConfigResourceTypeBroker)}, kmsg.ConfigSourceDynamicDefaultBrokerConfig},
	}
	for _, k := range sameNameTopicConfigs {
		if set[k] || (keys != nil && !slices.Contains(keys, k)) {
			continue
		}
		for _, s := range sources {
			cfg := img.Configs().Resource(s.res)
			if cfg == nil {
				continue
			}
			v, ok := cfg.Get(k)
			if !ok {
				continue
			}
			e := kmsg.NewDescribeConfigsResponseResourceConfig()
			e.Name, e.Value, e.Source = k, &v, s.source
			e.ConfigSynonyms = []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{}
			if synonyms {
				syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				syn.Name, syn.Value, syn.Source = k, &v, s.source
				e.ConfigSynonyms = append(e.ConfigSynonyms, syn)
			}
			entries = append(entries, e)
			break
		}
	}
	slices.SortStableFunc(entries, func(a, b kmsg.DescribeConfigsResponseResourceConfig) int { return strings.Compare(a.Name, b.Name) })
	return entries
}

// configEntries lists resource's configs in key order, only the keys
// named when keys is not null.
func configEntries(img *image.MetadataImage, resource image.ConfigResource, keys []string, source kmsg.ConfigSource, synonyms bool) []kmsg.DescribeConfigsResponseResourceConfig {
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	cfg := img.Configs().Resource(resource)
	if cfg == nil {
		return out
	}
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	for _, k := range cfg.Keys() {
		if keys != nil && !want[k] {
			continue
		}
		v, _ := cfg.Get(k)
		e := kmsg.NewDescribeConfigsResponseResourceConfig()
		e.Name, e.Value, e.Source = k, &v, source
		e.ConfigSynonyms = []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{}
		if synonyms { // the dynamic value is the only one kraftlab knows
			s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			s.Name, s.Value, s.Source = k, &v, source
			e.ConfigSynonyms = append(e.ConfigSynonyms, s)
		}
		out = append(out, e)
	}
	return out
}
