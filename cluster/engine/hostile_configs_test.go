package engine_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The hostile review's configs: 250 IncrementalAlterConfigs of 30
// made-up topic configs of 32,000 bytes each wrote 222 MB of config (RSS
// 40 MB -> 3.0 GB, 23 elections); CreateTopics took the same. Now only
// Kafka's topic configs are taken, with values of their type: every
// request is refused with INVALID_CONFIG and nothing is written. Sized
// down to 20 requests (19 MB before).
func TestHostileConfigFlood(t *testing.T) {
	ht := openHostile(t)
	cl := ht.client(t)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hostileRecovery)
	defer cancel()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "victim"); err != nil {
		t.Fatal(err)
	}
	value := strings.Repeat("x", 32000)
	var heapBefore runtime.MemStats
	runtime.ReadMemStats(&heapBefore)
	accepted := 0
	for i := range 20 {
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "victim"
		for k := range 30 {
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Op, c.Value = fmt.Sprintf("made.up.%d.%d", i, k), kmsg.IncrementalAlterConfigOpSet, &value
			res.Configs = append(res.Configs, c)
		}
		r.Resources = append(r.Resources, res)
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if code := resp.Resources[0].ErrorCode; code == 0 {
			accepted++
		} else if code != kerr.InvalidConfig.Code {
			t.Errorf("request %d: %s, want INVALID_CONFIG", i, errName(code))
		}
	}
	topic := kmsg.NewCreateTopicsRequestTopic()
	topic.Topic, topic.NumPartitions, topic.ReplicationFactor = "victim2", 1, 1
	for k := range 30 {
		topic.Configs = append(topic.Configs, kmsg.CreateTopicsRequestTopicConfig{Name: fmt.Sprintf("made.up.%d", k), Value: &value})
	}
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Topics, ct.TimeoutMillis = []kmsg.CreateTopicsRequestTopic{topic}, 5000
	cresp, err := ct.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	configs, err := adm.DescribeTopicConfigs(ctx, "victim")
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for _, rc := range configs {
		for _, c := range rc.Configs {
			if strings.HasPrefix(c.Key, "made.up.") && c.Value != nil {
				stored += len(*c.Value)
			}
		}
	}
	var heapAfter runtime.MemStats
	runtime.ReadMemStats(&heapAfter)
	t.Logf("%d of 20 requests accepted, %d bytes of made-up config stored; CreateTopics with made-up configs: %s; heap in use %d -> %d MiB",
		accepted, stored, errName(cresp.Topics[0].ErrorCode), heapBefore.HeapInuse>>20, heapAfter.HeapInuse>>20)
	if accepted > 0 || stored > 0 || cresp.Topics[0].ErrorCode != kerr.InvalidConfig.Code {
		t.Errorf("made-up configs taken: %d requests, %d bytes stored, CreateTopics %s", accepted, stored, errName(cresp.Topics[0].ErrorCode))
	}
	ht.checkServing(t, "after the config flood")
}
