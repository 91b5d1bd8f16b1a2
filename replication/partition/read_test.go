package partition

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftlab/kraftlab/storage"
)

// The classic divergence: the new leader holds 0-9 of epoch 1 and wrote
// 10-11 in epoch 3; the old leader holds 0-12 of epoch 1 and 13-14 of
// epoch 2. Its fetch diverges at (1, 10); it truncates to 10 and then
// fetches the leader's 10-11.
func TestDivergenceTruncatesAtTheEpochBoundary(t *testing.T) {
	replicas := []int32{1, 2}
	lead := open(t, t.TempDir(), 1, 1)
	follow := open(t, t.TempDir(), 2, 1)

	if _, err := follow.MakeLeader(1, 1, replicas, []int32{2}, t0); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, follow, 10)
	mustAppend(t, follow, 3)
	if _, err := follow.MakeLeader(2, 2, replicas, []int32{2}, t0); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, follow, 2)

	if _, err := lead.MakeFollower(2, 1, 1, replicas, replicas); err != nil {
		t.Fatal(err)
	}
	if err := lead.AppendAsFollower(stampedBatch(0, 1, 10)); err != nil {
		t.Fatal(err)
	}
	if _, err := lead.MakeLeader(3, 3, replicas, []int32{1, 2}, t0); err != nil {
		t.Fatal(err)
	}
	// Before the new epoch writes, it is already known from its start.
	if got, err := lead.LastOffsetForLeaderEpoch(NoEpoch, 3, true); err != nil || got != (EpochEndOffset{3, 10}) {
		t.Fatalf("epoch 3 before any write: %+v %v, want (3, 10)", got, err)
	}
	mustAppend(t, lead, 2)
	if _, err := follow.MakeFollower(1, 3, 3, replicas, []int32{1, 2}); err != nil {
		t.Fatal(err)
	}

	f := FetchParams{ReplicaID: 2, FetchOffset: follow.LogEndOffset(), CurrentLeaderEpoch: 3, LastFetchedEpoch: 2, MaxBytes: 1 << 20}
	res, err := lead.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if res.DivergingEpoch == nil || *res.DivergingEpoch != (EpochEndOffset{1, 10}) || len(res.Records) != 0 {
		t.Fatalf("diverging %+v with %d bytes, want (1, 10) and none", res.DivergingEpoch, len(res.Records))
	}
	own, err := follow.LastOffsetForLeaderEpoch(NoEpoch, res.DivergingEpoch.Epoch, false)
	if err != nil || own != (EpochEndOffset{1, 13}) {
		t.Fatalf("follower's end of epoch 1: %+v %v, want (1, 13)", own, err)
	}
	if err := follow.TruncateTo(min(own.EndOffset, res.DivergingEpoch.EndOffset)); err != nil {
		t.Fatal(err)
	}
	if follow.LogEndOffset() != 10 {
		t.Fatalf("truncated to %d, want 10", follow.LogEndOffset())
	}
	f.FetchOffset, f.LastFetchedEpoch = 10, 1
	res, err = lead.Read(f)
	if err != nil || res.DivergingEpoch != nil {
		t.Fatalf("second fetch: %+v %v", res.DivergingEpoch, err)
	}
	if err := follow.AppendAsFollower(res.Records); err != nil {
		t.Fatal(err)
	}
	if got, want := follow.Epochs(), lead.Epochs(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("follower epochs %v, leader's %v", got, want)
	}
	if follow.LogEndOffset() != 12 {
		t.Fatalf("follower log end %d, want 12", follow.LogEndOffset())
	}
}

func TestReadLimitsAndErrors(t *testing.T) {
	p := open(t, t.TempDir(), 1, 1)
	leader(t, p, []int32{1, 2})
	mustAppend(t, p, 4)
	mustAppend(t, p, 4)
	fetch(t, p, 2, 4, t0) // high watermark 4, log end 8

	read := func(f FetchParams) FetchResult {
		t.Helper()
		f.MaxBytes = 1 << 20
		res, err := p.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	consumer := read(FetchParams{ReplicaID: -1, CurrentLeaderEpoch: NoEpoch, LastFetchedEpoch: NoEpoch, Isolation: IsolationHighWatermark})
	if n := countRecords(t, consumer.Records); n != 4 || consumer.HighWatermark != 4 || consumer.LogEndOffset != 8 {
		t.Fatalf("consumer read %d records, hwm %d leo %d; want 4, 4, 8", n, consumer.HighWatermark, consumer.LogEndOffset)
	}
	if res := read(FetchParams{ReplicaID: -1, FetchOffset: 6, CurrentLeaderEpoch: NoEpoch, LastFetchedEpoch: NoEpoch, Isolation: IsolationTxnCommitted}); len(res.Records) != 0 {
		t.Fatal("a consumer read past the high watermark")
	}
	if res := read(FetchParams{ReplicaID: 2, FetchOffset: 4, CurrentLeaderEpoch: 1, LastFetchedEpoch: 1}); countRecords(t, res.Records) != 4 {
		t.Fatal("a follower did not read to the log end")
	}

	errs := []struct {
		name string
		f    FetchParams
		want *kerr.Error
	}{
		{"past the log end", FetchParams{ReplicaID: 2, FetchOffset: 9, CurrentLeaderEpoch: NoEpoch, LastFetchedEpoch: NoEpoch}, kerr.OffsetOutOfRange},
		{"an old leader epoch", FetchParams{ReplicaID: -1, CurrentLeaderEpoch: 0, LastFetchedEpoch: NoEpoch}, kerr.FencedLeaderEpoch},
		{"a newer leader epoch", FetchParams{ReplicaID: -1, CurrentLeaderEpoch: 2, LastFetchedEpoch: NoEpoch}, kerr.UnknownLeaderEpoch},
		{"a replica outside the assignment", FetchParams{ReplicaID: 9, CurrentLeaderEpoch: NoEpoch, LastFetchedEpoch: NoEpoch}, errNotLeaderOrFollower},
	}
	for _, c := range errs {
		_, err := p.Read(c.f)
		if ErrorCode(err) != c.want.Code {
			t.Errorf("%s: %v, want %s", c.name, err, c.want.Message)
		}
	}
	// A fetch offset past the end of the follower's epoch diverges even
	// with the offset inside the log: epoch 0, below every epoch here,
	// ends where the first one starts (Kafka's endOffsetFor), so the
	// follower truncates to 0.
	res := read(FetchParams{ReplicaID: 2, FetchOffset: 8, CurrentLeaderEpoch: 1, LastFetchedEpoch: 0})
	if res.DivergingEpoch == nil || *res.DivergingEpoch != (EpochEndOffset{0, 0}) {
		t.Fatalf("epoch 0 before the log's first: diverging %+v, want (0, 0)", res.DivergingEpoch)
	}

	if _, err := p.MakeFollower(2, 2, 2, []int32{1, 2}, []int32{1, 2}); err != nil {
		t.Fatal(err)
	}
	_, err := p.Read(FetchParams{ReplicaID: -1, CurrentLeaderEpoch: NoEpoch, LastFetchedEpoch: NoEpoch})
	wantCode(t, err, errNotLeaderOrFollower)
}

func TestListOffsets(t *testing.T) {
	p := open(t, t.TempDir(), 1, 1)
	leader(t, p, []int32{1})
	for i, ts := range []int64{100, 200, 300} {
		if _, err := p.AppendAsLeader(producerBatch(2, "x", ts), 1, t0); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
	}
	cases := []struct {
		ts   int64
		want TimestampOffset
	}{
		{EarliestTimestamp, TimestampOffset{-1, 0, 1}},
		{LatestTimestamp, TimestampOffset{-1, 6, 1}},
		{150, TimestampOffset{200, 2, 1}},
		{300, TimestampOffset{300, 4, 1}},
		{301, TimestampOffset{-1, -1, -1}},
		{MaxTimestamp, TimestampOffset{300, 4, 1}},
	}
	for _, c := range cases {
		got, err := p.ListOffsets(c.ts, NoEpoch)
		if err != nil || got != c.want {
			t.Errorf("timestamp %d: %+v %v, want %+v", c.ts, got, err, c.want)
		}
	}
}

// partition.metadata holds the topic id as Kafka writes it, and a directory
// of another topic id is refused.
func TestPartitionMetadataFile(t *testing.T) {
	dir := t.TempDir()
	p := open(t, dir, 1, 1)
	data, err := os.ReadFile(filepath.Join(p.Dir(), "partition.metadata"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "version: 0\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA\n"; string(data) != want {
		t.Fatalf("partition.metadata %q, want %q", data, want)
	}
	if filepath.Base(p.Dir()) != "t-0" || p.Name() != "t-0" || p.Topic() != "t" || p.Index() != 0 || p.TopicID() != topicID {
		t.Fatalf("directory %s, want t-0", p.Dir())
	}
	p.Close()
	_, err = New(Config{Topic: "t", TopicID: [16]byte{9}, Dir: dir, LocalBrokerID: 1})
	if err == nil || !strings.Contains(err.Error(), "topic id") {
		t.Fatalf("another topic id: %v", err)
	}
	p = open(t, dir, 1, 1)
	if err := p.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.Dir()); !os.IsNotExist(err) {
		t.Fatalf("directory after Delete: %v", err)
	}
	for _, bad := range []string{"", "..", "a/b", strings.Repeat("x", 250)} {
		if _, err := New(Config{Topic: bad, Dir: dir}); err == nil {
			t.Errorf("topic %q accepted", bad)
		}
	}
}

func countRecords(t testing.TB, raw []byte) int {
	t.Helper()
	n := 0
	if err := storage.Batches(raw, func(_ int, b *storage.Batch) error {
		n += int(b.NumRecords)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
