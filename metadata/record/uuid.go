package record

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
)

// Uuid is Kafka's 128-bit Uuid (org.apache.kafka.common.Uuid), the id of a
// topic, a broker incarnation or a log directory. It is written as 16 bytes,
// most significant first.
type Uuid [16]byte

// Reserved uuids (Kafka's Uuid.ZERO_UUID, Uuid.METADATA_TOPIC_ID and
// DirectoryId's MIGRATING, UNASSIGNED, LOST).
var (
	// ZeroUuid is Uuid.ZERO_UUID, also DirectoryId.MIGRATING.
	ZeroUuid = Uuid{}
	// MetadataTopicID is the topic id of __cluster_metadata, Uuid(0, 1).
	MetadataTopicID = NewUuid(0, 1)
	// DirectoryMigrating says a replica's log directory is not known yet.
	DirectoryMigrating = Uuid{}
	// DirectoryUnassigned says a replica has no log directory assigned.
	DirectoryUnassigned = NewUuid(0, 1)
	// DirectoryLost says a replica's log directory is offline.
	DirectoryLost = NewUuid(0, 2)
)

// NewUuid builds a Uuid from its most and least significant 64 bits, as
// Kafka's Uuid(long, long) constructor does.
func NewUuid(most, least uint64) Uuid {
	var u Uuid
	binary.BigEndian.PutUint64(u[:8], most)
	binary.BigEndian.PutUint64(u[8:], least)
	return u
}

// String is the uuid in URL-safe base64 without padding, as Kafka prints it.
func (u Uuid) String() string {
	return base64.RawURLEncoding.EncodeToString(u[:])
}

// ParseUuid reads a uuid in Kafka's base64 form.
func ParseUuid(s string) (Uuid, error) {
	var u Uuid
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return u, fmt.Errorf("%q is not a base64 uuid", s)
	}
	copy(u[:], b)
	return u, nil
}
