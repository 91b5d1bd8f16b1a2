package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Whatever Produce, Fetch, ListOffsets or OffsetForLeaderEpoch a client
// sends, at any version
// the broker serves, the ReplicaManager answers it (or, for a produce
// with acks=0, answers nothing) and never panics.
func FuzzReplicaRequests(f *testing.F) {
	rm := replicaRig(f)
	seed := func(key int16, version int16, r kmsg.Request) {
		r.SetVersion(version)
		f.Add(key, version, r.AppendTo(nil))
	}
	seed(0, 12, produceReq(12, 1, "led", ledID, 0, batch("a", "b")))
	seed(0, 13, produceReq(13, -1, "", ledID, 0, batch("a")))
	seed(1, 18, fetchReq(-1, ledID, 0, 0, 0))
	seed(1, 12, fetchReq(102, ledID, 0, 1, 1))
	lo := kmsg.NewPtrListOffsetsRequest()
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "led"
	lt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{kmsg.NewListOffsetsRequestTopicPartition()}
	lo.Topics = []kmsg.ListOffsetsRequestTopic{lt}
	seed(2, 11, lo)
	oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
	ot := kmsg.NewOffsetForLeaderEpochRequestTopic()
	ot.Topic = "led"
	ot.Partitions = []kmsg.OffsetForLeaderEpochRequestTopicPartition{kmsg.NewOffsetForLeaderEpochRequestTopicPartition()}
	oe.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{ot}
	seed(3, 4, oe)
	f.Fuzz(func(t *testing.T, key int16, version int16, body []byte) {
		answered := func(kmsg.Response) {}
		switch key {
		case 0:
			r := kmsg.NewPtrProduceRequest()
			r.SetVersion(version)
			if version < produceVersions.MinVersion || version > produceVersions.MaxVersion || r.ReadFrom(body) != nil {
				return
			}
			r.TimeoutMillis = min(max(r.TimeoutMillis, 0), 10)
			rm.produce(r, answered)
		case 1:
			r := kmsg.NewPtrFetchRequest()
			r.SetVersion(version)
			if version < fetchVersions.MinVersion || version > fetchVersions.MaxVersion || r.ReadFrom(body) != nil {
				return
			}
			r.MaxWaitMillis = min(max(r.MaxWaitMillis, 0), 10)
			rm.fetch(r, version%2 == 0, answered)
		case 2:
			r := kmsg.NewPtrListOffsetsRequest()
			r.SetVersion(version)
			if version < listOffsetsVersions.MinVersion || version > listOffsetsVersions.MaxVersion || r.ReadFrom(body) != nil {
				return
			}
			if resp := rm.listOffsets(r, version%2 == 0); len(resp.Topics) != len(r.Topics) {
				t.Fatalf("%d topics answered for %d", len(resp.Topics), len(r.Topics))
			}
		case 3:
			r := kmsg.NewPtrOffsetForLeaderEpochRequest()
			r.SetVersion(version)
			if version < offsetForLeaderEpochVersions.MinVersion || version > offsetForLeaderEpochVersions.MaxVersion || r.ReadFrom(body) != nil {
				return
			}
			if resp := rm.offsetForLeaderEpoch(r); len(resp.Topics) != len(r.Topics) {
				t.Fatalf("%d topics answered for %d", len(resp.Topics), len(r.Topics))
			}
		}
	})
}
