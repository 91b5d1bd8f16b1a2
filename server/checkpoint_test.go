package server

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kraftlab/kraftlab/replication/fetcher"
)

// Closing the manager checkpoints each replica's high watermark in
// Kafka's replication-offset-checkpoint format, and reading it back gives
// the same values.
func TestHighWatermarkCheckpoint(t *testing.T) {
	rm := replicaRig(t)
	if rp := syncProduce(t, rm, produceReq(13, -1, "", ledID, 0, batch("a", "b", "c"))); rp.ErrorCode != 0 {
		t.Fatalf("produce: %+v", rp)
	}
	rm.Close()
	raw, err := os.ReadFile(filepath.Join(rm.dir, highWatermarkCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if want := "0\n3\nfollows 0 0\nled 0 3\nwaits 0 0\n"; string(raw) != want {
		t.Fatalf("checkpoint %q, want %q", raw, want)
	}
	got, err := readOffsets(rm.dir, highWatermarkCheckpoint)
	if err != nil || len(got) != 3 || got[fetcher.TopicPartition{Topic: "led"}] != 3 {
		t.Fatalf("read back %v, %v", got, err)
	}
	for _, bad := range []string{"1\n0\n", "0\n2\nled 0 3\n", "0\n1\nled x 3\n", "0\n1\nled 0 -4\n", "0\n-1\n"} {
		if _, err := parseOffsets(bufio.NewScanner(bytes.NewBufferString(bad))); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// Whatever a checkpoint file holds, parsing it returns or fails, and
// never yields a negative offset.
func FuzzHighWatermarkCheckpoint(f *testing.F) {
	f.Add([]byte("0\n2\nfollows 0 0\nled 0 3\n"))
	f.Add([]byte("0\n1000000000\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseOffsets(bufio.NewScanner(bytes.NewReader(b)))
		if err != nil {
			return
		}
		for tp, off := range got {
			if off < 0 || tp.Partition < 0 {
				t.Fatalf("%v at %d", tp, off)
			}
		}
	})
}
