package kafkazk

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// Znodes as Kafka 3.9 writes them (ZkData's encoders) decode, and what
// kraftlab writes decodes back to what it wrote.
func TestZnodesReadKafkasJSON(t *testing.T) {
	b, err := DecodeBroker(1, 42, []byte(`{"features":{"metadata.version":{"min_version":1,"max_version":21}},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://localhost:9092"],"jmx_port":-1,"port":9092,"host":"localhost","version":5,"timestamp":"1700000000000","rack":"r1"}`))
	if err != nil || b.Epoch != 42 || b.Rack != "r1" || len(b.Endpoints) != 1 || b.Endpoints[0] != (Endpoint{"PLAINTEXT", "localhost", 9092}) {
		t.Fatalf("broker: %+v, %v", b, err)
	}
	if id, err := DecodeController([]byte(`{"version":2,"brokerid":3,"timestamp":"1700000000000","kraftControllerEpoch":-1}`)); err != nil || id != 3 {
		t.Fatalf("controller: %d, %v", id, err)
	}
	if e, err := DecodeControllerEpoch([]byte("7")); err != nil || e != 7 {
		t.Fatalf("controller epoch: %d, %v", e, err)
	}
	a, err := DecodeAssignment("t", []byte(`{"version":3,"partitions":{"0":[1,2,3],"1":[2,3,1]},"adding_replicas":{},"removing_replicas":{},"topic_id":"AAAAAAAAAAAAAAAAAAAAAQ"}`))
	if err != nil || !slices.Equal(a.Partitions(), []int32{0, 1}) || !slices.Equal(a.Replicas[1], []int32{2, 3, 1}) || a.ID != record.NewUuid(0, 1) {
		t.Fatalf("assignment: %+v, %v", a, err)
	}
	s, err := DecodeLeaderAndIsr("t", 0, 4, []byte(`{"version":1,"leader":1,"leader_epoch":3,"controller_epoch":5,"isr":[1,2]}`))
	if err != nil || s.Leader != 1 || s.LeaderEpoch != 3 || s.ControllerEpoch != 5 || !slices.Equal(s.ISR, []int32{1, 2}) || s.ZkVersion != 4 || s.Recovering {
		t.Fatalf("state: %+v, %v", s, err)
	}
	if id, err := DecodeClusterID([]byte(`{"version":"1","id":"abc"}`)); err != nil || id != "abc" {
		t.Fatalf("cluster id: %q, %v", id, err)
	}

	at := time.UnixMilli(1700000000000)
	w := Broker{ID: 2, Endpoints: []Endpoint{{"PLAINTEXT", "127.0.0.1", 9093}}, Timestamp: at}
	data := EncodeBroker(w)
	for _, want := range []string{`"version":5`, `"jmx_port":-1`, `"timestamp":"1700000000000"`, `"endpoints":["PLAINTEXT://127.0.0.1:9093"]`, `"host":"127.0.0.1"`, `"port":9093`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("broker JSON %s lacks %s", data, want)
		}
	}
	if got, err := DecodeBroker(2, 7, data); err != nil || got.Endpoints[0] != w.Endpoints[0] || !got.Timestamp.Equal(at) {
		t.Errorf("broker round trip: %+v, %v", got, err)
	}
	sw := LeaderAndIsr{Leader: 2, LeaderEpoch: 1, ISR: []int32{2}, ControllerEpoch: 3, Recovering: true}
	if got, err := DecodeLeaderAndIsr("t", 0, 9, EncodeLeaderAndIsr(sw)); err != nil || !got.Recovering || got.Leader != 2 || got.ZkVersion != 9 {
		t.Errorf("state round trip: %+v, %v", got, err)
	}
	aw := Assignment{Topic: "t", ID: record.NewUuid(1, 2), Replicas: map[int32][]int32{0: {1}, 1: {2}}}
	if got, err := DecodeAssignment("t", EncodeAssignment(aw)); err != nil || got.ID != aw.ID || len(got.Replicas) != 2 {
		t.Errorf("assignment round trip: %+v, %v", got, err)
	}
	if got, err := DecodeProducerIDBlock(EncodeProducerIDBlock(ProducerIDBlock{Broker: 1, Start: 1000, End: 1999})); err != nil || got.End != 1999 {
		t.Errorf("producer id block round trip: %+v, %v", got, err)
	}
}

// What Kafka would not write is an error naming the znode.
func TestZnodesRefuseDamage(t *testing.T) {
	for name, err := range map[string]error{
		"broker not JSON":     second(DecodeBroker(1, 0, []byte("{"))),
		"broker bad endpoint": second(DecodeBroker(1, 0, []byte(`{"version":5,"endpoints":["nope"]}`))),
		"controller no id":    second(DecodeController([]byte(`{"version":2}`))),
		"epoch not a number":  second(DecodeControllerEpoch([]byte("x"))),
		"partition not int":   second(DecodeAssignment("t", []byte(`{"version":3,"partitions":{"a":[1]}}`))),
		"no replicas":         second(DecodeAssignment("t", []byte(`{"version":3,"partitions":{"0":[]}}`))),
		"state no leader":     second(DecodeLeaderAndIsr("t", 0, 0, []byte(`{"version":1,"isr":[1]}`))),
		"block backwards":     second(DecodeProducerIDBlock([]byte(`{"version":1,"broker":1,"block_start":"9","block_end":"1"}`))),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(err.Error(), "/") {
			t.Errorf("%s: %v does not name the znode", name, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func FuzzDecoders(f *testing.F) {
	f.Add([]byte(`{"version":5,"endpoints":["PLAINTEXT://h:1"],"jmx_port":-1}`))
	f.Add([]byte(`{"version":3,"partitions":{"0":[1]},"topic_id":"AAAAAAAAAAAAAAAAAAAAAQ"}`))
	f.Add([]byte(`{"version":1,"leader":1,"leader_epoch":0,"isr":[1],"leader_recovery_state":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = DecodeBroker(1, 0, data)
		_, _ = DecodeController(data)
		_, _ = DecodeControllerEpoch(data)
		_, _ = DecodeAssignment("t", data)
		_, _ = DecodeLeaderAndIsr("t", 0, 0, data)
		_, _ = DecodeProducerIDBlock(data)
		_, _ = DecodeClusterID(data)
	})
}
