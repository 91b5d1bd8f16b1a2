package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/replication/fetcher"
)

// highWatermarkCheckpoint is the file in a log directory holding every
// replica's high watermark, as Kafka names it.
const highWatermarkCheckpoint = "replication-offset-checkpoint"

// maxCheckpointSize bounds what reading a checkpoint may hold in memory.
const maxCheckpointSize = 64 << 20

// writeHighWatermarks replaces dir's checkpoint with hwms in Kafka's
// format (OffsetCheckpointFile: a version line 0, a count, then "topic
// partition offset" lines), through a temporary file and a rename so a
// crash leaves the old file or the new one whole.
func writeHighWatermarks(dir string, hwms map[fetcher.TopicPartition]int64) error {
	tps := make([]fetcher.TopicPartition, 0, len(hwms))
	for tp := range hwms {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b fetcher.TopicPartition) int {
		return strings.Compare(a.String(), b.String())
	})
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "0\n%d\n", len(tps))
	for _, tp := range tps {
		fmt.Fprintf(&buf, "%s %d %d\n", tp.Topic, tp.Partition, hwms[tp])
	}
	path := filepath.Join(dir, highWatermarkCheckpoint)
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("high watermark checkpoint: %w", err)
	}
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("high watermark checkpoint: %w", err)
	}
	return nil
}

// readHighWatermarks reads dir's checkpoint; a missing file is empty.
func readHighWatermarks(dir string) (map[fetcher.TopicPartition]int64, error) {
	path := filepath.Join(dir, highWatermarkCheckpoint)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[fetcher.TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("high watermark checkpoint: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("high watermark checkpoint: %w", err)
	}
	if st.Size() > maxCheckpointSize {
		return nil, fmt.Errorf("high watermark checkpoint %s: %d bytes, more than %d", path, st.Size(), maxCheckpointSize)
	}
	return parseHighWatermarks(bufio.NewScanner(f))
}

func parseHighWatermarks(sc *bufio.Scanner) (map[fetcher.TopicPartition]int64, error) {
	line := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		return sc.Text(), true
	}
	if v, ok := line(); !ok || v != "0" {
		return nil, fmt.Errorf("high watermark checkpoint: version %q, want 0", v)
	}
	c, _ := line()
	n, err := strconv.Atoi(c)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("high watermark checkpoint: count %q", c)
	}
	out := map[fetcher.TopicPartition]int64{}
	for range n {
		l, ok := line()
		if !ok {
			return nil, fmt.Errorf("high watermark checkpoint: %d entries, want %d", len(out), n)
		}
		fields := strings.Fields(l)
		if len(fields) != 3 {
			return nil, fmt.Errorf("high watermark checkpoint: malformed line %q", l)
		}
		p, err1 := strconv.ParseInt(fields[1], 10, 32)
		off, err2 := strconv.ParseInt(fields[2], 10, 64)
		if err1 != nil || err2 != nil || p < 0 || off < 0 {
			return nil, fmt.Errorf("high watermark checkpoint: malformed line %q", l)
		}
		out[fetcher.TopicPartition{Topic: fields[0], Partition: int32(p)}] = off
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("high watermark checkpoint: %w", err)
	}
	return out, nil
}

// checkpointHighWatermarks writes every hosted replica's high watermark.
func (rm *ReplicaManager) checkpointHighWatermarks() {
	rm.mu.RLock()
	hwms := make(map[fetcher.TopicPartition]int64, len(rm.hosted))
	for tp, h := range rm.hosted {
		hwms[tp] = h.p.HighWatermark()
	}
	rm.mu.RUnlock()
	if err := writeHighWatermarks(rm.dir, hwms); err != nil {
		rm.log.Error("checkpoint", "err", err)
	}
}
