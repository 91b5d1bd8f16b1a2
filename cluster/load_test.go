package cluster_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/metadata/record"
)

func TestLoadActionChecksAndSaysWhatItDid(t *testing.T) {
	p, _ := open(t, 3, 0)
	ctx := context.Background()
	for _, tc := range []struct {
		a    cluster.Action
		want string
	}{
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: -1}, "must be between 0 (stop) and 100000"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: cluster.MaxLoadRate + 1}, "must be between 0 (stop) and 100000"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 10, RecordBytes: -5}, "load record size -5 B must be between 16 B and 32 KiB"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 10, RecordBytes: cluster.MaxLoadRecordBytes + 1}, "must be between 16 B and 32 KiB"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 100_000, RecordBytes: 1000}, "load of 100000 records/s of 1000 B is 95 MiB/s, more than the 32 MiB/s a playground takes"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 10, Node: ref("leader")}, "load takes no node"},
	} {
		_, err := p.Do(ctx, tc.a)
		if !errors.Is(err, cluster.ErrBadAction) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a bad action saying %q", tc.a, err, tc.want)
		}
	}
	if v := p.View(); v.Load.On() {
		t.Fatalf("a refused load runs: %+v", v.Load)
	}

	steps := []struct {
		a    cluster.Action
		want string
	}{
		{cluster.Action{Kind: cluster.ActLoad}, "load is already off (0 records committed so far)"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 200}, "load started: 200 rec/s of 100 B, appended on the leader"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 500, RecordBytes: 2048}, "load changed: 500 rec/s of 2.0 KiB (was 200 rec/s of 100 B)"},
		{cluster.Action{Kind: cluster.ActLoad}, "load stopped ("},
	}
	for _, s := range steps {
		if res := do(t, p, s.a); res.Action != cluster.ActLoad || !strings.HasPrefix(res.Message, s.want) {
			t.Errorf("%s: %+v, want %q", s.a, res, s.want)
		}
	}
	var loads []string
	for _, ev := range p.EventStream().Since(0) {
		if ev.Kind == cluster.EventLoad {
			loads = append(loads, ev.Message)
		}
	}
	if len(loads) != len(steps) || !strings.HasPrefix(loads[1], "load started") || !strings.HasPrefix(loads[3], "load stopped") {
		t.Errorf("load events: %q", loads)
	}
	if got := (cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 200}).String(); got != "load 200 --size 100" {
		t.Errorf("String() = %q", got)
	}
	if got := (cluster.Action{Kind: cluster.ActLoad}).String(); got != "load stop" {
		t.Errorf("String() = %q", got)
	}
}

// Load records are real ConfigRecords of exactly the size asked for, every
// size from the smallest up, across the length prefixes' boundaries.
func TestLoadRecordsAreConfigRecordsOfTheSizeAsked(t *testing.T) {
	sizes := []int{cluster.MinLoadRecordBytes, 17, 100, 142, 143, 144, 145, 16400, 16401, 16402, 16403, cluster.MaxLoadRecordBytes}
	for _, size := range sizes {
		recs, err := cluster.LoadRecords(41, 3, size)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		for i, v := range recs {
			if len(v) != size {
				t.Fatalf("size %d: record %d has %d B", size, i, len(v))
			}
			r, err := record.Decode(v)
			if err != nil {
				t.Fatalf("size %d: record %d: %v", size, i, err)
			}
			c, ok := r.(*record.ConfigRecord)
			if !ok || c.ResourceType != record.ResourceTopic || c.Name != "seq" || c.Value == nil {
				t.Fatalf("size %d: record %d is %+v", size, i, r)
			}
			if want := strconv.Itoa(41 + i); size >= 40 && !strings.HasPrefix(*c.Value, want) {
				t.Errorf("size %d: value %.30q does not start with its sequence number %s", size, *c.Value, want)
			}
		}
	}
	if _, err := cluster.LoadRecords(0, 1, cluster.MinLoadRecordBytes-1); err == nil {
		t.Error("a load record below the minimum size was made")
	}
}

// Topic loads are bounded in number and, together, in bytes a second; a
// load replacing one on the same topic does not count the old one.
func TestTopicLoadsAreBounded(t *testing.T) {
	p, _ := open(t, 1, 1)
	ctx := context.Background()
	for i := range cluster.MaxTopicLoads + 1 {
		topic := "t" + strconv.Itoa(i)
		if _, err := p.Do(ctx, cluster.Action{Kind: cluster.ActCreateTopic, Topic: topic, Partitions: 1, ReplicationFactor: 1}); err != nil {
			t.Fatal(err)
		}
		_, err := p.Do(ctx, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 1, Topic: topic})
		switch {
		case i < cluster.MaxTopicLoads && err != nil:
			t.Fatalf("topic load %d: %v", i, err)
		case i == cluster.MaxTopicLoads && (!errors.Is(err, cluster.ErrBadAction) || !strings.Contains(err.Error(), "16 topic loads run already")):
			t.Fatalf("topic load %d beyond the bound: %v", i, err)
		}
	}
	v := p.View()
	if len(v.TopicLoads) != cluster.MaxTopicLoads {
		t.Fatalf("%d topic loads run, want %d", len(v.TopicLoads), cluster.MaxTopicLoads)
	}
	// Changing a running one's rate is no new load.
	if _, err := p.Do(ctx, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 2, Topic: "t0"}); err != nil {
		t.Fatalf("change t0's rate: %v", err)
	}
	// 16 MiB/s on t0 and on t1 is 32 MiB/s, and the others add 1400 B/s.
	half := cluster.MaxLoadBytesPerSec / 2 / cluster.MaxLoadRecordBytes
	if _, err := p.Do(ctx, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: half, RecordBytes: cluster.MaxLoadRecordBytes, Topic: "t0"}); err != nil {
		t.Fatalf("half the bytes on t0: %v", err)
	}
	_, err := p.Do(ctx, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: half, RecordBytes: cluster.MaxLoadRecordBytes, Topic: "t1"})
	if !errors.Is(err, cluster.ErrBadAction) || !strings.Contains(err.Error(), "more than the 32 MiB/s a playground takes") {
		t.Fatalf("t1 past the bytes bound: %v", err)
	}
	if _, err := p.Do(ctx, cluster.Action{Kind: cluster.ActLoad, Topic: "t2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Do(ctx, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 1, Topic: "t16"}); err != nil {
		t.Fatalf("a load once another stopped: %v", err)
	}
}
