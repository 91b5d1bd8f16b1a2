package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

const epochCacheFile = "leader-epoch-checkpoint"

// EpochEntry says that leader epoch Epoch wrote the log from StartOffset on.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// epochCache is Kafka's leader-epoch cache (LeaderEpochFileCache): the start
// offset of every leader epoch still in the log, with epochs and start
// offsets both strictly increasing. The Log keeps it in step with its batches.
type epochCache struct {
	entries []EpochEntry
}

func (c *epochCache) lastEpoch() int32 {
	if len(c.entries) == 0 {
		return -1
	}
	return c.entries[len(c.entries)-1].Epoch
}

// endOffsetFor answers OffsetsForLeaderEpoch: the largest epoch at most the
// asked one, and the offset where it ended (the start of the next epoch, or
// the log end offset for the latest). It returns (-1, -1) when the asked epoch
// is below every epoch the cache knows.
func (c *epochCache) endOffsetFor(epoch int32, logEndOffset int64) (int32, int64) {
	i, found := slices.BinarySearchFunc(c.entries, epoch, func(e EpochEntry, t int32) int {
		return int(e.Epoch) - int(t)
	})
	if !found {
		i-- // the largest epoch below the asked one
	}
	if i < 0 {
		return -1, -1
	}
	if i == len(c.entries)-1 {
		return c.entries[i].Epoch, logEndOffset
	}
	return c.entries[i].Epoch, c.entries[i+1].StartOffset
}

// assign records that epoch writes from start on. Like Kafka's assign, it
// first drops latest entries that the new one contradicts (a later or equal
// epoch, or a start at or past the new one: epochs that wrote nothing).
// It reports whether the cache changed.
func (c *epochCache) assign(epoch int32, start int64) bool {
	if n := len(c.entries); n > 0 && c.entries[n-1].Epoch == epoch && c.entries[n-1].StartOffset <= start {
		return false
	}
	for n := len(c.entries); n > 0 && (c.entries[n-1].Epoch >= epoch || c.entries[n-1].StartOffset >= start); n-- {
		c.entries = c.entries[:n-1]
	}
	c.entries = append(c.entries, EpochEntry{Epoch: epoch, StartOffset: start})
	return true
}

// truncateFromEnd drops the epochs that start at or after end, the new log
// end offset after a truncation.
func (c *epochCache) truncateFromEnd(end int64) bool {
	n := len(c.entries)
	for n > 0 && c.entries[n-1].StartOffset >= end {
		n--
	}
	changed := n != len(c.entries)
	c.entries = c.entries[:n]
	return changed
}

// truncateFromStart drops the epochs that ended at or before start, the new
// log start offset, and moves the start of the epoch that covers it there.
func (c *epochCache) truncateFromStart(start int64) bool {
	i := len(c.entries) - 1
	for i >= 0 && c.entries[i].StartOffset > start {
		i--
	}
	if i < 0 || (i == 0 && c.entries[0].StartOffset == start) {
		return false
	}
	c.entries = slices.Delete(c.entries, 0, i)
	c.entries[0].StartOffset = start
	return true
}

func (c *epochCache) marshal() []byte {
	lines := make([]string, len(c.entries))
	for i, e := range c.entries {
		lines[i] = fmt.Sprintf("%d %d", e.Epoch, e.StartOffset)
	}
	return formatCheckpoint(lines)
}

func parseEpochCache(data []byte) ([]EpochEntry, error) {
	lines, err := parseCheckpoint(data, 2)
	if err != nil {
		return nil, err
	}
	out := make([]EpochEntry, 0, len(lines))
	for i, f := range lines {
		epoch, err1 := strconv.ParseInt(f[0], 10, 32)
		start, err2 := strconv.ParseInt(f[1], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		if epoch < 0 || start < 0 {
			return nil, fmt.Errorf("entry %d: negative epoch %d or offset %d", i, epoch, start)
		}
		if i > 0 && (int32(epoch) <= out[i-1].Epoch || start <= out[i-1].StartOffset) {
			return nil, fmt.Errorf("entry %d (%d %d) does not follow (%d %d)", i, epoch, start, out[i-1].Epoch, out[i-1].StartOffset)
		}
		out = append(out, EpochEntry{Epoch: int32(epoch), StartOffset: start})
	}
	return out, nil
}

// readEpochCache loads dir's leader-epoch-checkpoint; ok is false when the
// file is missing or unreadable, with err saying why in the latter case.
func readEpochCache(dir string) (entries []EpochEntry, ok bool, err error) {
	path := filepath.Join(dir, epochCacheFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err == nil {
		entries, err = parseEpochCache(data)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return entries, true, nil
}
