package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

const (
	logSuffix   = ".log"
	indexSuffix = ".index"
	// corruptSuffix marks a damaged segment kept for inspection
	// (Options.SetAsideDamage).
	corruptSuffix  = ".corrupt"
	indexEntrySize = 8
)

// segmentName is the file name stem of the segment starting at base: the
// base offset in 20 digits, so that names sort like offsets.
func segmentName(base int64) string { return fmt.Sprintf("%020d", base) }

// parseSegmentName returns the base offset of a segment file name with the
// given suffix.
func parseSegmentName(name, suffix string) (int64, bool) {
	stem, ok := strings.CutSuffix(name, suffix)
	if !ok || len(stem) != 20 {
		return 0, false
	}
	base, err := strconv.ParseInt(stem, 10, 64)
	return base, err == nil && base >= 0
}

// indexEntry maps a batch's last offset, relative to the segment's, to its
// byte position in the segment.
type indexEntry struct {
	rel uint32
	pos uint32
}

// segment is one file of the log. Its fields are guarded by the Log's lock.
type segment struct {
	base int64 // offset of its first batch, and its name
	next int64 // offset after its last batch (base when empty)
	size int64 // bytes of whole batches

	file *os.File
	path string

	index        []indexEntry
	indexFile    *os.File // open while the segment is the active one
	indexWritten int      // entries of index already in indexFile
	dirty        bool     // written since the last fsync
}

func (s *segment) indexPath() string {
	return strings.TrimSuffix(s.path, logSuffix) + indexSuffix
}

// maybeIndex adds an index entry for the batch at pos, keyed by its last
// offset as Kafka's LogSegment.append keys it, if more than interval bytes
// were written since the last entry. The rule depends only on the
// segment's bytes, so recovery rebuilds the very same entries.
func (s *segment) maybeIndex(last, pos int64, interval int) {
	prev := int64(0)
	if n := len(s.index); n > 0 {
		prev = int64(s.index[n-1].pos)
	}
	if pos-prev > int64(interval) {
		s.index = append(s.index, indexEntry{rel: uint32(last - s.base), pos: uint32(pos)})
	}
}

// lookup returns the position of the last indexed batch ending at or
// before offset, where a forward scan for offset can begin.
func (s *segment) lookup(offset int64) int64 {
	rel := offset - s.base
	i := sort.Search(len(s.index), func(i int) bool { return int64(s.index[i].rel) > rel })
	if i == 0 {
		return 0
	}
	return int64(s.index[i-1].pos)
}

// header reads the header of the batch at pos.
func (s *segment) header(pos int64) (batchHeader, error) {
	var buf [BatchHeaderSize]byte
	n, err := s.file.ReadAt(buf[:], pos)
	if n < len(buf) && pos+int64(n) < s.size {
		return batchHeader{}, fmt.Errorf("read %s at position %d: %w", s.path, pos, err)
	}
	h, err := parseHeader(buf[:n])
	if err == nil && pos+int64(h.size) > s.size {
		err = fmt.Errorf("%w: batch of %d bytes runs past the segment end %d", ErrCorruptBatch, h.size, s.size)
	}
	if err != nil {
		return h, fmt.Errorf("%s at position %d: %w", s.path, pos, err)
	}
	return h, nil
}

// find returns the position and base offset of the first batch whose last
// offset is at least offset, or (size, next) if there is none. It scans the
// headers from the nearest index entry in chunks of findChunk bytes: one
// read per chunk rather than one per batch, since the scan sits on every
// fetch's path.
func (s *segment) find(offset int64) (int64, int64, error) {
	pos := s.lookup(offset)
	bufp := scanBuffers.Get().(*[]byte)
	defer scanBuffers.Put(bufp)
	for pos < s.size {
		chunk := (*bufp)[:min(int64(len(*bufp)), s.size-pos)]
		n, err := s.file.ReadAt(chunk, pos)
		if n < len(chunk) {
			return 0, 0, fmt.Errorf("read %s at position %d: %w", s.path, pos, err)
		}
		at := 0
		for pos < s.size {
			if at+BatchHeaderSize > len(chunk) {
				if at == 0 { // a header cut by the segment end
					_, err := s.header(pos)
					return 0, 0, err
				}
				break // read the next chunk from pos
			}
			h, err := parseHeader(chunk[at:])
			if err == nil && pos+int64(h.size) > s.size {
				err = fmt.Errorf("%w: batch of %d bytes runs past the segment end %d", ErrCorruptBatch, h.size, s.size)
			}
			if err != nil {
				return 0, 0, fmt.Errorf("%s at position %d: %w", s.path, pos, err)
			}
			if h.last >= offset {
				return pos, h.base, nil
			}
			pos += int64(h.size)
			at += h.size
		}
	}
	return s.size, s.next, nil
}

// findChunk is how many bytes find reads at a time: a few index intervals,
// so a lookup is mostly one read.
const findChunk = 16 << 10

var scanBuffers = sync.Pool{New: func() any { b := make([]byte, findChunk); return &b }}

// appendIndexEntries encodes index entries as the .index file holds them.
func appendIndexEntries(dst []byte, entries []indexEntry) []byte {
	for _, e := range entries {
		dst = binary.BigEndian.AppendUint32(dst, e.rel)
		dst = binary.BigEndian.AppendUint32(dst, e.pos)
	}
	return dst
}

// writeIndexBelow writes the index entries of batches below offset flushed
// not yet in the index file, using buf as scratch space, and returns buf
// for reuse. The index file names flushed batches alone, so that an entry
// past a segment's end at Open is a flushed batch that is gone. The
// entries go through disk; a write that fails part way is cut back to the
// entries before it, so the file never holds half an entry.
func (s *segment) writeIndexBelow(disk Disk, buf []byte, flushed int64) ([]byte, error) {
	n := len(s.index)
	for n > s.indexWritten && s.base+int64(s.index[n-1].rel) >= flushed {
		n--
	}
	if s.indexWritten == n {
		return buf, nil
	}
	if s.indexFile == nil {
		if err := s.openIndex(); err != nil {
			return buf, err
		}
	}
	buf = appendIndexEntries(buf[:0], s.index[s.indexWritten:n])
	at := int64(s.indexWritten) * indexEntrySize
	if n, err := disk.WriteAt(s.indexFile, buf, at); err != nil {
		err = fmt.Errorf("write index %s: %w", s.indexPath(), err)
		if n > 0 {
			// Open rebuilds an index that disagrees with its segment, so a
			// failed cut only costs that.
			err = errors.Join(err, s.indexFile.Truncate(at))
		}
		return buf, err
	}
	s.indexWritten = n
	return buf, nil
}

func (s *segment) openIndex() error {
	f, err := os.OpenFile(s.indexPath(), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open index: %w", err)
	}
	s.indexFile = f
	return nil
}

// trimIndex drops the index entries of batches at or past pos.
func (s *segment) trimIndex(pos int64) error {
	n := sort.Search(len(s.index), func(i int) bool { return int64(s.index[i].pos) >= pos })
	s.index = s.index[:n]
	if s.indexWritten <= n {
		return nil
	}
	s.indexWritten = n
	if s.indexFile == nil {
		if err := s.openIndex(); err != nil {
			return err
		}
	}
	if err := s.indexFile.Truncate(int64(n) * indexEntrySize); err != nil {
		return fmt.Errorf("truncate index %s: %w", s.indexPath(), err)
	}
	return nil
}

// truncate cuts the segment at pos, whose batch starts at offset next.
func (s *segment) truncate(pos, next int64) error {
	if err := s.trimIndex(pos); err != nil {
		return err
	}
	if pos == s.size {
		return nil
	}
	if err := s.file.Truncate(pos); err != nil {
		return fmt.Errorf("truncate %s: %w", s.path, err)
	}
	s.size, s.next = pos, next
	return nil
}

// close closes the segment's files.
func (s *segment) close() error {
	err := s.file.Close()
	if s.indexFile != nil {
		err = errors.Join(err, s.indexFile.Close())
		s.indexFile = nil
	}
	return err
}

// remove closes the segment and deletes its files. The log file goes first:
// Open deletes an index left without its log file.
func (s *segment) remove() error {
	if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete segment: %w", err)
	}
	err := s.close()
	if rerr := os.Remove(s.indexPath()); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return fmt.Errorf("delete segment %s: %w", s.path, err)
	}
	return nil
}

// createSegment creates the empty segment files for base in dir.
func createSegment(dir string, base int64) (*segment, error) {
	path := filepath.Join(dir, segmentName(base)+logSuffix)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create segment: %w", err)
	}
	s := &segment{base: base, next: base, file: f, path: path}
	if err := os.Remove(s.indexPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		f.Close()
		return nil, fmt.Errorf("create segment: %w", err)
	}
	if err := s.openIndex(); err != nil {
		f.Close()
		return nil, fmt.Errorf("create segment %s: %w", path, err)
	}
	return s, nil
}
