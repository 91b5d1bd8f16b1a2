package record

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestRoundTripEveryTypeAndVersion(t *testing.T) {
	seen := map[APIKey]map[int16]bool{}
	for _, r := range samples() {
		b, err := Encode(r)
		if err != nil {
			t.Fatalf("%s v%d: %v", Name(r), r.RecordVersion(), err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%s v%d: decode: %v", Name(r), r.RecordVersion(), err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("%s v%d round trip:\n got %+v\nwant %+v", Name(r), r.RecordVersion(), got, r)
		}
		b2, _ := Encode(got)
		if !bytes.Equal(b, b2) {
			t.Errorf("%s v%d: re-encoding changed the bytes", Name(r), r.RecordVersion())
		}
		if seen[r.APIKey()] == nil {
			seen[r.APIKey()] = map[int16]bool{}
		}
		seen[r.APIKey()][r.RecordVersion()] = true
	}
	for k, info := range keys {
		for v := int16(0); v <= info.maxVersion; v++ {
			if !seen[k][v] {
				t.Errorf("no sample of %s v%d", k, v)
			}
		}
	}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	s = strings.Join(strings.Fields(s), "")
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The golden bytes below are written by hand from Kafka's JSON schemas and
// AbstractApiMessageSerde: uvarint frame version 01, uvarint apiKey,
// uvarint version, then the fields in schema order (int32/int64 big-endian,
// compact strings and arrays as uvarint length+1, uuids as 16 bytes), then
// the tagged fields: a uvarint count and, per field, uvarint tag, uvarint
// size, bytes.
func TestGoldenBytes(t *testing.T) {
	const uuidA = "0102030405060708 090a0b0c0d0e0f10"
	cases := []struct {
		name string
		rec  Record
		hex  string
	}{
		{"NoOpRecord v0: frame, apiKey 20 = 0x14, v0, no tagged fields",
			&NoOpRecord{}, "01 14 00  00"},
		{"ProducerIdsRecord v0: apiKey 15 = 0x0f, broker 101, epoch 7, next id 2000 = 0x7d0, no tags",
			&ProducerIdsRecord{BrokerID: 101, BrokerEpoch: 7, NextProducerID: 2000},
			"01 0f 00  00000065 0000000000000007 00000000000007d0  00"},
		{"TopicRecord v0: Name compact \"foo\" (len 3+1), TopicId, no tags",
			&TopicRecord{Name: "foo", TopicID: topicA},
			"01 02 00  04 666f6f  " + uuidA + "  00"},
		{"FeatureLevelRecord v0: \"metadata.version\" (16+1 = 0x11), level 33 as int16",
			&FeatureLevelRecord{Name: MetadataVersionFeature, FeatureLevel: 33},
			"01 0c 00  11 6d657461646174612e76657273696f6e  0021  00"},
		{"BrokerRegistrationChangeRecord v0 fence: apiKey 17 = 0x11, broker 101, epoch 7, one tag: 0, size 1, +1",
			&BrokerRegistrationChangeRecord{BrokerID: 101, BrokerEpoch: 7, Fenced: FencingFence},
			"01 11 00  00000065  0000000000000007  01  00 01 01"},
		{"BrokerRegistrationChangeRecord v0 unfence: Fenced -1 = 0xff",
			&BrokerRegistrationChangeRecord{BrokerID: 101, BrokerEpoch: 7, Fenced: FencingUnfence},
			"01 11 00  00000065  0000000000000007  01  00 01 ff"},
		{"BrokerRegistrationChangeRecord v1 controlled shutdown: tag 1 only (Fenced is 0, the default)",
			&BrokerRegistrationChangeRecord{Version: 1, BrokerID: 101, BrokerEpoch: 7, InControlledShutdown: ControlledShutdownBegin},
			"01 11 01  00000065  0000000000000007  01  01 01 01"},
		{"PartitionChangeRecord v2: partition 3, tags 0 (Isr [101,102]: 03 + 8 bytes = size 9) and 1 (Leader 102, size 4)",
			&PartitionChangeRecord{Version: 2, PartitionID: 3, TopicID: topicA, Isr: []int32{101, 102},
				Leader: 102, LeaderRecoveryState: LeaderRecoveryNoChange},
			"01 05 02  00000003  " + uuidA + "  02  00 09 03 00000065 00000066  01 04 00000066"},
		{"PartitionChangeRecord v0 leader -1: the tag is written since -1 is not the default -2",
			&PartitionChangeRecord{PartitionID: 0, TopicID: topicA, Leader: NoLeader, LeaderRecoveryState: LeaderRecoveryNoChange},
			"01 05 00  00000000  " + uuidA + "  01  01 04 ffffffff"},
		{"PartitionRecord v2: replicas [1,2], isr [1,2], no removing/adding (01), leader 1, epochs 0, directories 2 x MIGRATING, no tags (ELR null, recovery 0)",
			&PartitionRecord{Version: 2, PartitionID: 0, TopicID: topicA, Replicas: []int32{1, 2}, Isr: []int32{1, 2},
				RemovingReplicas: []int32{}, AddingReplicas: []int32{}, Leader: 1,
				Directories: []Uuid{DirectoryMigrating, DirectoryMigrating}},
			"01 03 02  00000000  " + uuidA + "  03 00000001 00000002  03 00000001 00000002  01  01  00000001  00000000  00000000" +
				"  03 " + strings.Repeat("00", 32) + "  00"},
		{"RegisterBrokerRecord v4: broker 101, IsMigratingZkBroker false, epoch 5, one endpoint PLAINTEXT 127.0.0.1:9092 (0x2384) with its own empty tags, no features, null rack (00), fenced, not in controlled shutdown, no tags",
			&RegisterBrokerRecord{Version: 4, BrokerID: 101, IncarnationID: topicA, BrokerEpoch: 5,
				EndPoints: []BrokerEndpoint{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092}},
				Features:  []BrokerFeature{}, Fenced: true},
			"01 00 04  00000065  00  " + uuidA + "  0000000000000005  02  0a 504c41494e54455854  0a 3132372e302e302e31  2384  0000  00" +
				"  01  00  01  00  00"},
		{"BeginTransactionRecord v0: apiKey 23 = 0x17; Name is tag 0, nullable, default null: one tagged field, tag 0, size 4, compact \"Boo\"",
			&BeginTransactionRecord{Name: str("Boo")},
			"01 17 00  01  00 04 04 426f6f"},
		{"BeginTransactionRecord v0 without a name: null is the default, so no tagged field",
			&BeginTransactionRecord{}, "01 17 00  00"},
		{"EndTransactionRecord v0: apiKey 24 = 0x18, no fields",
			&EndTransactionRecord{}, "01 18 00  00"},
		{"AbortTransactionRecord v0: apiKey 25 = 0x19, Reason \"\" (not null: tag 0, size 1, compact empty string 01)",
			&AbortTransactionRecord{Reason: str("")}, "01 19 00  01  00 01 01"},
		{"RegisterControllerRecord v0: apiKey 27 = 0x1b, controller 3000 = 0xbb8, incarnation, not zk-migration-ready, one endpoint CONTROLLER localhost:9093 (0x2385) SASL_PLAINTEXT (2), one feature metadata.version 7-33, no tags",
			&RegisterControllerRecord{ControllerID: 3000, IncarnationID: topicA,
				EndPoints: []ControllerEndpoint{{Name: "CONTROLLER", Host: "localhost", Port: 9093, SecurityProtocol: SecurityProtocolSASLPlain}},
				Features:  []ControllerFeature{{Name: MetadataVersionFeature, MinSupportedVersion: 7, MaxSupportedVersion: 33}}},
			"01 1b 00  00000bb8  " + uuidA + "  00  02  0b 434f4e54524f4c4c4552  0a 6c6f63616c686f7374  2385  0002  00" +
				"  02  11 6d657461646174612e76657273696f6e  0007  0021  00  00"},
		{"UserScramCredentialRecord v0: apiKey 11 = 0x0b, Name \"u\", mechanism 1 (SCRAM-SHA-256), compact bytes salt [aa], storedKey [] (01), serverKey [bb cc], iterations 4096 = 0x1000",
			&UserScramCredentialRecord{Name: "u", Mechanism: ScramSHA256, Salt: []byte{0xaa}, StoredKey: []byte{}, ServerKey: []byte{0xbb, 0xcc}, Iterations: 4096},
			"01 0b 00  02 75  01  02 aa  01  03 bbcc  00001000  00"},
		{"RemoveUserScramCredentialRecord v0: apiKey 22 = 0x16, Name \"u\", mechanism 2",
			&RemoveUserScramCredentialRecord{Name: "u", Mechanism: ScramSHA512}, "01 16 00  02 75  02  00"},
		{"UnregisterControllerRecord v0: apiKey 29 = 0x1d, controller 3000",
			&UnregisterControllerRecord{ControllerID: 3000}, "01 1d 00  00000bb8  00"},
		{"ConfigRecord v0: type 2 (topic), \"t\", \"retention.ms\" (12+1 = 0x0d), null value (00)",
			&ConfigRecord{ResourceType: ResourceTopic, ResourceName: "t", Name: "retention.ms"},
			"01 04 00  02  02 74  0d 726574656e74696f6e2e6d73  00  00"},
	}
	for _, c := range cases {
		want := unhex(t, c.hex)
		got, err := Encode(c.rec)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %x\nwant %x", c.name, got, want)
		}
		back, err := Decode(want)
		if err != nil {
			t.Fatalf("%s: decode: %v", c.name, err)
		}
		if !reflect.DeepEqual(back, c.rec) {
			t.Errorf("%s: decoded %+v, want %+v", c.name, back, c.rec)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	cases := []struct {
		name, hex string
		want      error
		says      string
	}{
		{"empty", "", ErrMalformed, "frame header"},
		{"frame version 0", "00 14 00 00", ErrUnknown, "frame version 0"},
		{"frame version 2", "02 14 00 00", ErrUnknown, "frame version 2"},
		{"unknown apiKey 6", "01 06 00 00", ErrUnknown, "apiKey 6"},
		{"RegisterControllerRecord version 1", "01 1b 01 00", ErrUnknown, "RegisterControllerRecord version 1"},
		{"apiKey too large", "01 ffff03 00 00", ErrMalformed, "too large"},
		{"version too new", "01 14 01 00", ErrUnknown, "NoOpRecord version 1"},
		{"garbage after", "01 14 00 00 00", ErrMalformed, "NoOpRecord v0: 1 byte(s) of garbage"},
		{"overlong varint", "01 ffffffffff01", ErrMalformed, "varint"},
		{"null non-nullable string", "01 02 00 00" + strings.Repeat("00", 17), ErrMalformed, "TopicRecord v0: non-nullable field Name was serialized as null"},
		{"count past the end", "01 03 00 00000000" + strings.Repeat("00", 16) + "ffffff7f", ErrMalformed, "PartitionRecord v0: field Replicas claims"},
		{"tag count past the end", "01 14 00 ff7f", ErrMalformed, "NoOpRecord v0: 16383 tagged fields claimed"},
		{"tags out of order", "01 14 00 02 05 00 03 00", ErrMalformed, "tagged field 3 follows tag 5"},
		{"known tag with spare bytes", "01 11 00 00000001 0000000000000001 01 00 02 0100", ErrMalformed, "BrokerRegistrationChangeRecord v0: tagged field 0: 1 bytes left over"},
		{"known tag too short", "01 05 00 00000000" + strings.Repeat("00", 16) + "01 01 02 0000", ErrMalformed, "PartitionChangeRecord v0: tagged field 1: unexpected end"},
		{"string too long", "01 02 00 ffff02", ErrMalformed, "invalid length"},
		{"transaction name with a byte to spare", "01 17 00 01 00 03 01 00 00", ErrMalformed, "BeginTransactionRecord v0: tagged field 0: 2 bytes left over"},
		{"null controller endpoints", "01 1b 00 00000001" + strings.Repeat("00", 16) + "00 00 01 00", ErrMalformed, "RegisterControllerRecord v0: non-nullable field EndPoints was serialized as null"},
		{"unknown apiKey 26", "01 1a 00 00", ErrUnknown, "apiKey 26"},
		{"null SCRAM salt", "01 0b 00 02 75 01 00", ErrMalformed, "UserScramCredentialRecord v0: non-nullable field Salt was serialized as null"},
		{"SCRAM salt past the end", "01 0b 00 02 75 01 05 aa", ErrMalformed, "UserScramCredentialRecord v0: unexpected end"},
	}
	for _, c := range cases {
		_, err := Decode(unhex(t, c.hex))
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: got %v, want %v saying %q", c.name, err, c.want, c.says)
		}
	}
}

func TestUnknownTaggedFieldsAreSkipped(t *testing.T) {
	// NoOpRecord with one unknown tag 9 of 3 bytes.
	r, err := Decode(unhex(t, "01 14 00 01 09 03 aabbcc"))
	if err != nil || !reflect.DeepEqual(r, &NoOpRecord{}) {
		t.Fatalf("got %v, %v", r, err)
	}
	// A tag a version does not have is unknown there: InControlledShutdown
	// (tag 1) in a v0 BrokerRegistrationChangeRecord.
	r, err = Decode(unhex(t, "01 11 00 00000001 0000000000000001 01 01 01 01"))
	if err != nil || r.(*BrokerRegistrationChangeRecord).InControlledShutdown != 0 {
		t.Fatalf("got %+v, %v", r, err)
	}
}

func TestEveryTruncationFails(t *testing.T) {
	for _, r := range samples() {
		b, _ := Encode(r)
		for n := 0; n < len(b); n++ {
			if _, err := Decode(b[:n]); err == nil {
				t.Errorf("%s v%d cut to %d of %d bytes decoded", Name(r), r.RecordVersion(), n, len(b))
			}
		}
	}
}

func TestEncodeRefusesFieldsTheVersionLacks(t *testing.T) {
	cases := []Record{
		&RegisterBrokerRecord{Version: 0, InControlledShutdown: true},
		&RegisterBrokerRecord{Version: 1, IsMigratingZkBroker: true},
		&RegisterBrokerRecord{Version: 2, LogDirs: []Uuid{dirA}},
		&RegisterBrokerRecord{Version: 3, CordonedLogDirs: []Uuid{}},
		&BrokerRegistrationChangeRecord{Version: 0, InControlledShutdown: 1},
		&BrokerRegistrationChangeRecord{Version: 1, LogDirs: []Uuid{dirA}},
		&BrokerRegistrationChangeRecord{Version: 2, CordonedLogDirs: []Uuid{}},
		&PartitionRecord{Version: 0, Directories: []Uuid{dirA}},
		&PartitionRecord{Version: 1, EligibleLeaderReplicas: []int32{}},
		&PartitionChangeRecord{Version: 0, Leader: NoLeaderChange, Directories: []Uuid{}},
		&PartitionChangeRecord{Version: 1, Leader: NoLeaderChange, LastKnownElr: []int32{1}},
		&NoOpRecord{Version: 1},
		&TopicRecord{Version: -1},
		&TopicRecord{Name: strings.Repeat("x", 0x8000)},
	}
	for _, r := range cases {
		if b, err := Encode(r); err == nil {
			t.Errorf("%s v%d %+v encoded as %x", Name(r), r.RecordVersion(), r, b)
		}
	}
}

func TestUuidString(t *testing.T) {
	if s := MetadataTopicID.String(); s != "AAAAAAAAAAAAAAAAAAAAAQ" {
		t.Errorf("metadata topic id prints as %s", s)
	}
	u, err := ParseUuid(topicA.String())
	if err != nil || u != topicA {
		t.Errorf("parse: %v %v", u, err)
	}
	if _, err := ParseUuid("nope"); err == nil {
		t.Error("parsed nope")
	}
}

// TestEncodeRefusesLongStringsNamingTheField: a string longer than a
// compact string can carry is refused with the field's name, tagged ones
// too (BeginTransactionRecord's Name was once reported as "tag 0").
func TestEncodeRefusesLongStringsNamingTheField(t *testing.T) {
	long := strings.Repeat("x", 0x8000)
	for _, c := range []struct {
		rec   Record
		field string
	}{
		{&BeginTransactionRecord{Name: &long}, "string field Name is"},
		{&AbortTransactionRecord{Reason: &long}, "string field Reason is"},
		{&TopicRecord{Name: long}, "string field Name is"},
		{&ConfigRecord{Name: "x", Value: &long}, "string field Value is"},
		{&RegisterBrokerRecord{EndPoints: []BrokerEndpoint{{Host: long}}}, "string field EndPoints.Host is"},
	} {
		_, err := Encode(c.rec)
		if err == nil || !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), Name(c.rec)) {
			t.Errorf("%s: got %v, want an error naming the record and saying %q", Name(c.rec), err, c.field)
		}
	}
}
