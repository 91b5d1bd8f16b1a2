package server

import (
	"strings"
	"testing"
)

// A directory id is printed and passed to Kafka's tools: as Kafka's
// Uuid.randomUuid, none is reserved and none has a "-", which
// kafka-metadata-quorum would read as an option.
func TestNewDirectoryIDsAreToolSafe(t *testing.T) {
	for range 2000 {
		u := newDirectoryID()
		if u[0] == 0 || strings.Contains(u.String(), "-") {
			t.Fatalf("directory id %s", u)
		}
	}
}
