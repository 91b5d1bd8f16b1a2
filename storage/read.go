package storage

import "fmt"

// Read returns whole batches, raw as stored, starting with the batch that
// holds offset and adding batches while they fit in maxBytes. Like Kafka's
// fetch it always returns at least one whole batch, however large, and stops
// at the end of a segment. At the log end offset it returns no bytes; below
// the log start or past the end it fails with ErrOffsetOutOfRange. The first
// batch may hold offsets below offset (and below the log start).
func (l *Log) Read(offset int64, maxBytes int) ([]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.err != nil {
		return nil, l.err
	}
	if end := l.leo(); offset < l.start || offset > end {
		return nil, fmt.Errorf("read offset %d: %w: log holds %d to %d", offset, ErrOffsetOutOfRange, l.start, end)
	}
	if offset == l.leo() {
		return nil, nil
	}
	seg := l.segmentFor(offset)
	pos, _, err := seg.find(offset)
	if err != nil {
		return nil, fmt.Errorf("read offset %d: %w", offset, err)
	}
	if pos == seg.size {
		return nil, fmt.Errorf("read offset %d: %s ends at offset %d before it", offset, seg.path, seg.next)
	}
	buf, err := readFull(seg, pos, int(min(int64(max(maxBytes, BatchHeaderSize)), seg.size-pos)))
	if err != nil {
		return nil, err
	}
	end := 0
	for end < len(buf) {
		h, err := parseHeader(buf[end:])
		if err != nil && end == 0 {
			return nil, fmt.Errorf("read offset %d: %s at position %d: %w", offset, seg.path, pos, err)
		}
		if err != nil || end+h.size > len(buf) {
			if end > 0 {
				break
			}
			// The first batch is bigger than maxBytes: return it whole.
			if pos+int64(h.size) > seg.size {
				return nil, fmt.Errorf("read offset %d: %s: batch at position %d runs past the segment end", offset, seg.path, pos)
			}
			return readFull(seg, pos, h.size)
		}
		end += h.size
	}
	return buf[:end], nil
}

func readFull(seg *segment, pos int64, n int) ([]byte, error) {
	buf := make([]byte, n)
	if _, err := seg.file.ReadAt(buf, pos); err != nil {
		return nil, fmt.Errorf("read %s at position %d: %w", seg.path, pos, err)
	}
	return buf, nil
}
