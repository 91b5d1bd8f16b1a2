package wire

import (
	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kraftlab-private APIs: the push replication RPCs of package pushrpc,
// under keys far above Kafka's, framed as Kafka's. The wire carries them
// as it carries Kafka's own: a server decodes and serves them, counters
// count them and logs name them.

// privateKeys are the private API keys, in the order of their slots.
var privateKeys = [...]int16{pushrpc.AppendEntriesKey, pushrpc.InstallSnapshotKey, pushrpc.ObserveQuorumKey}

// keySlots is the size of a table by API key: Kafka's keys, then the
// private ones.
const keySlots = kmsg.MaxKey + 1 + len(privateKeys)

// keySlot is key's index in a table by API key, -1 for a key neither
// Kafka nor kraftlab has.
func keySlot(key int16) int {
	if key >= 0 && key <= kmsg.MaxKey {
		return int(key)
	}
	for i, k := range privateKeys {
		if k == key {
			return kmsg.MaxKey + 1 + i
		}
	}
	return -1
}

// slotKey is the API key of a slot of keySlot.
func slotKey(slot int) int16 {
	if slot <= kmsg.MaxKey {
		return int16(slot)
	}
	return privateKeys[slot-kmsg.MaxKey-1]
}

// requestForKey returns an empty request of a Kafka or private API, nil
// for an unknown key.
func requestForKey(key int16) kmsg.Request {
	if r := kmsg.RequestForKey(key); r != nil {
		return r
	}
	return pushrpc.RequestForKey(key)
}

// apiName names a Kafka or private API.
func apiName(key int16) string { return pushrpc.NameForKey(key) }
