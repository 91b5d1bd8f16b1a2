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
	"github.com/kraftlab/kraftlab/replication/partition"
)

// The offset checkpoints of a log directory, as Kafka names them: every
// hosted replica's high watermark, and its recovery point (the end of
// what its log has flushed), which tells a damaged or truncated log from
// one a crash shortened.
const (
	highWatermarkCheckpoint = "replication-offset-checkpoint"
	recoveryPointCheckpoint = partition.RecoveryPointCheckpoint
)

// maxCheckpointSize bounds what reading a checkpoint may hold in memory.
const maxCheckpointSize = 64 << 20

// writeOffsets replaces dir's checkpoint file name with offsets in Kafka's
// format (OffsetCheckpointFile: a version line 0, a count, then "topic
// partition offset" lines), through a temporary file and a rename so a
// crash leaves the old file or the new one whole.
func writeOffsets(dir, name string, offsets map[fetcher.TopicPartition]int64) error {
	tps := make([]fetcher.TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b fetcher.TopicPartition) int {
		return strings.Compare(a.String(), b.String())
	})
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "0\n%d\n", len(tps))
	for _, tp := range tps {
		fmt.Fprintf(&buf, "%s %d %d\n", tp.Topic, tp.Partition, offsets[tp])
	}
	path := filepath.Join(dir, name)
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
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
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// readOffsets reads dir's checkpoint file name; a missing file is empty.
func readOffsets(dir, name string) (map[fetcher.TopicPartition]int64, error) {
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[fetcher.TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxCheckpointSize {
		return nil, fmt.Errorf("%s: %d bytes, more than %d", path, st.Size(), maxCheckpointSize)
	}
	out, err := parseOffsets(bufio.NewScanner(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

func parseOffsets(sc *bufio.Scanner) (map[fetcher.TopicPartition]int64, error) {
	line := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		return sc.Text(), true
	}
	if v, ok := line(); !ok || v != "0" {
		return nil, fmt.Errorf("version %q, want 0", v)
	}
	c, _ := line()
	n, err := strconv.Atoi(c)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("count %q", c)
	}
	out := map[fetcher.TopicPartition]int64{}
	for range n {
		l, ok := line()
		if !ok {
			return nil, fmt.Errorf("%d entries, want %d", len(out), n)
		}
		fields := strings.Fields(l)
		if len(fields) != 3 {
			return nil, fmt.Errorf("malformed line %q", l)
		}
		p, err1 := strconv.ParseInt(fields[1], 10, 32)
		off, err2 := strconv.ParseInt(fields[2], 10, 64)
		if err1 != nil || err2 != nil || p < 0 || off < 0 {
			return nil, fmt.Errorf("malformed line %q", l)
		}
		out[fetcher.TopicPartition{Topic: fields[0], Partition: int32(p)}] = off
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// readCheckpoints reads the offsets the last incarnation checkpointed. A
// file that cannot be read is left out: its high watermarks then start at
// the log start and catch up from the leader, and damage shows only by
// what storage finds.
func (rm *ReplicaManager) readCheckpoints() map[fetcher.TopicPartition]checkpointed {
	out := map[fetcher.TopicPartition]checkpointed{}
	hwms, err := readOffsets(rm.dir, highWatermarkCheckpoint)
	if err != nil {
		rm.log.Warn("ignoring the high watermark checkpoint", "err", err)
	}
	points, err := readOffsets(rm.dir, recoveryPointCheckpoint)
	if err != nil {
		rm.log.Warn("ignoring the recovery point checkpoint", "err", err)
	}
	for tp, off := range hwms {
		c := out[tp]
		c.highWatermark = off
		out[tp] = c
	}
	for tp, off := range points {
		c := out[tp]
		c.recoveryPoint = off
		out[tp] = c
	}
	return out
}

// takeCarried returns what the last incarnation checkpointed for tp, and
// leaves the replica's checkpoints to the replica from now on.
func (rm *ReplicaManager) takeCarried(tp fetcher.TopicPartition) checkpointed {
	rm.ckMu.Lock()
	defer rm.ckMu.Unlock()
	c := rm.carried[tp]
	delete(rm.carried, tp)
	return c
}

// checkpoint writes every hosted replica's high watermark and recovery
// point, and what the last incarnation wrote for replicas not opened yet. A damaged replica that has not fetched back what it lost keeps
// the recovery point its files fell short of, so that a restart before
// then still knows it is damaged. Checkpoints are written one at a time.
func (rm *ReplicaManager) checkpoint() {
	rm.ckMu.Lock()
	defer rm.ckMu.Unlock()
	rm.mu.RLock()
	hwms := make(map[fetcher.TopicPartition]int64, len(rm.hosted))
	points := make(map[fetcher.TopicPartition]int64, len(rm.hosted))
	for tp, h := range rm.hosted {
		st := h.p.State()
		hwms[tp] = st.HighWatermark
		points[tp] = st.LastFlushedOffset
		if d := h.damage.Load(); d != nil {
			points[tp] = max(points[tp], d.To)
		}
	}
	rm.mu.RUnlock()
	for tp, c := range rm.carried {
		hwms[tp], points[tp] = c.highWatermark, c.recoveryPoint
	}
	for name, offsets := range map[string]map[fetcher.TopicPartition]int64{highWatermarkCheckpoint: hwms, recoveryPointCheckpoint: points} {
		if err := writeOffsets(rm.dir, name, offsets); err != nil {
			rm.log.Error("checkpoint", "err", err)
		}
	}
}
