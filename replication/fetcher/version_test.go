package fetcher

import "testing"

// A broker of an older inter.broker.protocol.version fetches with its
// versions: a Kafka 3.9 leader refuses Fetch v18 and ListOffsets v11 by
// closing the connection, and serves v17 and v9.
func TestFetchersUseTheConfiguredVersions(t *testing.T) {
	tp := TopicPartition{"orders", 0}
	l := newTestLeader(1)
	l.fetchVersion, l.listOffsetsVersion = 17, 9
	log := openLog(t)
	l.lead(tp, 4, log)
	l.produce(t, tp, 10)
	if err := log.AdvanceLogStart(6); err != nil {
		t.Fatal(err)
	}
	f := newFollower(t)
	appendRecords(t, f.log, 4, 2) // below the leader's start: ListOffsets too
	m := newManager(t, network{1: l}, Config{FetchVersion: 17, ListOffsetsVersion: 9})
	addAll(m, 1, 4, map[TopicPartition]*followerLog{tp: f})
	eventually(t, "caught up with v17 fetches and a v9 ListOffsets", func() bool { return caughtUp(t, l, tp, f) }, statsOf(m))
}
