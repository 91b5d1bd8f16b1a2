package cache

import (
	"fmt"
	"strconv"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeConfigs answers a DescribeConfigsRequest from img for the broker
// nodeID, as Kafka 4.4's ConfigHelper.describeConfigs does, with the
// dynamic configs the metadata log holds:
//   - a topic: the configs set on it (DYNAMIC_TOPIC_CONFIG), or
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
		resp.Resources = append(resp.Resources, res)
	}
	return resp
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
