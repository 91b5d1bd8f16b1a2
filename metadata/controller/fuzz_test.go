package controller

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fuzzAPIs are the requests the fuzzer builds, by its first byte.
var fuzzAPIs = []func() kmsg.Request{
	func() kmsg.Request { return kmsg.NewPtrCreateTopicsRequest() },
	func() kmsg.Request { return kmsg.NewPtrBrokerRegistrationRequest() },
	func() kmsg.Request { return kmsg.NewPtrAlterPartitionRequest() },
	func() kmsg.Request { return kmsg.NewPtrBrokerHeartbeatRequest() },
	func() kmsg.Request { return kmsg.NewPtrDeleteTopicsRequest() },
	func() kmsg.Request { return kmsg.NewPtrCreatePartitionsRequest() },
	func() kmsg.Request { return kmsg.NewPtrAllocateProducerIDsRequest() },
	func() kmsg.Request { return kmsg.NewPtrIncrementalAlterConfigsRequest() },
}

// fuzzSeed encodes req as the fuzzer reads it: API index, version, body.
func fuzzSeed(api int, req kmsg.Request) []byte {
	return append([]byte{byte(api), byte(req.GetVersion())}, req.AppendTo(nil)...)
}

// FuzzRequests hands the controller requests decoded by kmsg from
// arbitrary bytes: it must answer each with its own API's response, never
// panic, and never write a record the image refuses (the harness fails
// the test if the committed image refuses one).
func FuzzRequests(f *testing.F) {
	f.Add(fuzzSeed(0, createTopic("seed", 3, 2)))
	f.Add(fuzzSeed(0, createTopic("", -1, -1)))
	f.Add(fuzzSeed(1, registration(104)))
	f.Add(fuzzSeed(1, registration(101)))
	f.Add(fuzzSeed(3, heartbeat(101, 3, 100)))
	f.Add(fuzzSeed(6, allocate(101, 3)))
	ap := kmsg.NewPtrAlterPartitionRequest()
	ap.Version = 3
	ap.BrokerID, ap.BrokerEpoch = 101, 3
	ap.Topics = []kmsg.AlterPartitionRequestTopic{{Partitions: []kmsg.AlterPartitionRequestTopicPartition{{NewEpochISR: []kmsg.AlterPartitionRequestTopicPartitionNewEpochISR{{BrokerID: 101, BrokerEpoch: -1}}}}}}
	f.Add(fuzzSeed(2, ap))
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.Version, dt.TopicNames = 5, []string{"fixed"}
	f.Add(fuzzSeed(4, dt))
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Version = 3
	cp.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "fixed", Count: 4, Assignment: []kmsg.CreatePartitionsRequestTopicAssignment{{Replicas: []int32{101, 102}}}}}
	f.Add(fuzzSeed(5, cp))
	f.Add(fuzzSeed(7, alterConfigs(false,
		resource(kmsg.ConfigResourceTypeTopic, "fixed", op(kmsg.IncrementalAlterConfigOpAppend, "leader.replication.throttled.replicas", kmsg.StringPtr("0:101,*"))),
		resource(kmsg.ConfigResourceTypeBroker, "", op(kmsg.IncrementalAlterConfigOpSet, "unclean.leader.election.enable", kmsg.StringPtr("true"))))))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		req := fuzzAPIs[int(data[0])%len(fuzzAPIs)]()
		var api *struct{ min, max int16 }
		for _, a := range APIs {
			if a.Key == req.Key() {
				api = &struct{ min, max int16 }{a.MinVersion, a.MaxVersion}
			}
		}
		req.SetVersion(api.min + int16(data[1])%(api.max-api.min+1))
		if err := req.ReadFrom(data[2:]); err != nil {
			return // the listener refuses what kmsg cannot decode
		}
		h, _ := cluster(t, 3, Config{})
		h.createTopic("fixed", 3, 2)
		resp := h.do(req)
		if resp == nil || resp.Key() != req.Key() {
			t.Fatalf("%s answered with %v", kmsg.NameForKey(req.Key()), resp)
		}
		h.sync()
	})
}
