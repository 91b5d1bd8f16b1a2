package controller

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The replication throttle configs (Kafka's QuotaConfig): rates are
// dynamic broker configs, the throttled replicas topic configs.
const (
	leaderThrottledRate       = "leader.replication.throttled.rate"
	followerThrottledRate     = "follower.replication.throttled.rate"
	leaderThrottledReplicas   = "leader.replication.throttled.replicas"
	followerThrottledReplicas = "follower.replication.throttled.replicas"
)

// listConfigs are the LIST-typed configs kraftlab knows, the only ones
// APPEND and SUBTRACT may change (ConfigSchema.isSplittable).
var listConfigs = []string{leaderThrottledReplicas, followerThrottledReplicas}

// throttledReplica is one entry of a throttled-replicas list.
var throttledReplica = regexp.MustCompile(`^([0-9]+:[0-9]+)?$`)

// incrementalAlterConfigs is Kafka's ControllerApis.handleIncrementalAlterConfigs
// with ConfigurationControlManager.incrementalAlterConfigs: each resource
// is checked and changed on its own, its changes written as one
// ConfigRecord per key (Value null for a deletion), and answered once they
// commit. BROKER resources are the cluster default ("") or one broker's
// id; TOPIC resources must exist. Only the configs Kafka 4.4 defines for
// a topic, and the broker configs kraftlab acts on, are taken, each value
// checked against its definition (validateConfig).
func (c *QuorumController) incrementalAlterConfigs(r *kmsg.IncrementalAlterConfigsRequest) outcome {
	resp := kmsg.NewPtrIncrementalAlterConfigsResponse()
	img := c.st.working
	var o outcome
	seen := map[image.ConfigResource]int{}
	for _, res := range r.Resources {
		seen[image.ConfigResource{Type: int8(res.ResourceType), Name: res.ResourceName}]++
	}
	for _, res := range r.Resources {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		key := image.ConfigResource{Type: int8(res.ResourceType), Name: res.ResourceName}
		var recs []record.Record
		aerr := (*apiError)(nil)
		if seen[key] > 1 {
			aerr = refuse(kerr.InvalidRequest, "Duplicate resource.")
		} else {
			recs, aerr = alterResource(img, key, res.Configs)
		}
		if aerr != nil {
			rr.ErrorCode, rr.ErrorMessage = aerr.code(), aerr.message()
		} else if !r.ValidateOnly {
			o.records = append(o.records, recs...)
			for _, rec := range recs {
				cr := rec.(*record.ConfigRecord)
				c.log.Info("altering config", "resource_type", cr.ResourceType, "resource", cr.ResourceName, "key", cr.Name, "value", cr.Value)
			}
		}
		resp.Resources = append(resp.Resources, rr)
	}
	o.resp = resp
	return o
}

// alterResource checks one resource's operations and returns its records.
func alterResource(img *image.MetadataImage, res image.ConfigResource, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) ([]record.Record, *apiError) {
	switch res.Type {
	case record.ResourceTopic:
		if img.Topics().TopicByName(res.Name) == nil {
			return nil, refuse(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", res.Name)
		}
	case record.ResourceBroker:
		if res.Name != "" {
			if id, err := strconv.ParseInt(res.Name, 10, 32); err != nil || id < 0 {
				return nil, refuse(kerr.InvalidRequest, "Illegal broker ID %q: a broker resource is a broker's id, or empty for the cluster default.", res.Name)
			}
		}
	default:
		return nil, refuse(kerr.InvalidRequest, "Unsupported resource type %d: kraftlab's controller alters BROKER (4) and TOPIC (2) configs.", res.Type)
	}
	current := img.Configs().Resource(res)
	// Duplicates first, as ControllerApis finds them before the
	// controller looks at a value.
	names := map[string]bool{}
	for _, op := range ops {
		if names[op.Name] {
			return nil, refuse(kerr.InvalidRequest, "Duplicate alterConfigs operation for key %s.", op.Name)
		}
		names[op.Name] = true
	}
	var recs []record.Record
	for _, op := range ops {
		if op.Name == "" {
			return nil, refuse(kerr.InvalidConfig, "A config needs a name.")
		}
		var old *string
		if current != nil {
			if v, ok := current.Get(op.Name); ok {
				old = &v
			}
		}
		next, aerr := applyOp(op, old)
		if aerr != nil {
			return nil, aerr
		}
		if next != nil {
			if aerr := validateConfig(res.Type, op.Name, *next); aerr != nil {
				return nil, aerr
			}
		}
		// Kafka writes broker configs even unchanged (KAFKA-14136), so
		// brokers reload them; a topic's only when they change.
		if res.Type == record.ResourceBroker || !equalPtr(old, next) {
			recs = append(recs, &record.ConfigRecord{ResourceType: res.Type, ResourceName: res.Name, Name: op.Name, Value: next})
		}
	}
	return recs, nil
}

// applyOp is one operation on a key's current value: the new value, nil
// for none.
func applyOp(op kmsg.IncrementalAlterConfigsRequestResourceConfig, old *string) (*string, *apiError) {
	switch op.Op {
	case kmsg.IncrementalAlterConfigOpSet:
		if op.Value == nil {
			return nil, refuse(kerr.InvalidRequest, "Null value not supported for SET of %s.", op.Name)
		}
		v := *op.Value
		return &v, nil
	case kmsg.IncrementalAlterConfigOpDelete:
		return nil, nil
	case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
		if !slices.Contains(listConfigs, op.Name) {
			return nil, refuse(kerr.InvalidConfig, "Can't %s to key %s because its type is not LIST.", op.Op, op.Name)
		}
		var parts []string
		if old != nil && *old != "" {
			parts = strings.Split(*old, ",")
		}
		val := ""
		if op.Value != nil {
			val = *op.Value
		}
		for _, v := range strings.Split(val, ",") {
			if op.Op == kmsg.IncrementalAlterConfigOpAppend {
				if !slices.Contains(parts, v) {
					parts = append(parts, v)
				}
			} else if i := slices.Index(parts, v); i >= 0 {
				parts = slices.Delete(parts, i, i+1)
			}
		}
		v := strings.Join(parts, ",")
		return &v, nil
	}
	return nil, refuse(kerr.InvalidRequest, "Unknown config operation %d for %s.", op.Op, op.Name)
}

func equalPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// alterConfigsError answers every resource of r with code.
func alterConfigsError(r *kmsg.IncrementalAlterConfigsRequest, code int16, msg *string) *kmsg.IncrementalAlterConfigsResponse {
	resp := kmsg.NewPtrIncrementalAlterConfigsResponse()
	for _, res := range r.Resources {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = res.ResourceType, res.ResourceName, code, msg
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}
