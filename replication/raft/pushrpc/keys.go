package pushrpc

import "github.com/twmb/franz-go/pkg/kmsg"

// The private API keys. Kafka's keys end below 100; these sit far above
// them, so a Kafka peer can never mistake one for its own.
const (
	AppendEntriesKey   int16 = 32000
	InstallSnapshotKey int16 = 32001
	ObserveQuorumKey   int16 = 32002
)

// Version is the only version of each API: 0, flexible.
const Version int16 = 0

var names = map[int16]string{
	AppendEntriesKey:   "AppendEntries",
	InstallSnapshotKey: "InstallSnapshot",
	ObserveQuorumKey:   "ObserveQuorum",
}

// IsKey reports whether key is one of push replication's APIs.
func IsKey(key int16) bool { _, ok := names[key]; return ok }

// NameForKey names an API, Kafka's or push replication's, as
// kmsg.NameForKey does for Kafka's.
func NameForKey(key int16) string {
	if s, ok := names[key]; ok {
		return s
	}
	return kmsg.NameForKey(key)
}

// RequestForKey returns an empty request of a push API, nil for any
// other key.
func RequestForKey(key int16) kmsg.Request {
	switch key {
	case AppendEntriesKey:
		return new(AppendEntriesRequest)
	case InstallSnapshotKey:
		return new(InstallSnapshotRequest)
	case ObserveQuorumKey:
		return new(ObserveQuorumRequest)
	}
	return nil
}

// ResponseForKey returns an empty response of a push API, nil for any
// other key.
func ResponseForKey(key int16) kmsg.Response {
	if r := RequestForKey(key); r != nil {
		return r.ResponseKind()
	}
	return nil
}
