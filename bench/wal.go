package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/kraftlab/kraftlab/benchkit"
)

// walChunk is how far the WAL file is preallocated ahead of its writes, as
// etcd's WAL preallocates 64 MiB segments, so an fdatasync does not also have
// to grow the file.
const walChunk = 64 << 20

const (
	walEntry     byte = 1
	walHardState byte = 2
)

var walCRC = crc32.MakeTable(crc32.Castagnoli)

// wal is a minimal write-ahead log for the etcd peer in flush-always mode:
// one preallocated file per voter, each record a 4-byte length, a CRC-32C of
// the rest, a type byte (entry or hard state) and the protobuf body. It
// measures what durability costs (one write and at most one fdatasync per
// Ready); it keeps no index and has no reader, since the benchmark never
// restarts a voter. A record for an index already written supersedes the
// earlier one, which is how a reader would apply a truncation.
type wal struct {
	f    *os.File
	off  int64
	size int64
	buf  []byte
}

func openWAL(path string) (*wal, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open wal: %w", err)
	}
	w := &wal{f: f}
	if err := w.grow(walChunk); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// save appends the Ready's entries and hard state and, when raft says the
// write must be durable, syncs it before returning.
func (w *wal) save(hs *pb.HardState, ents []*pb.Entry, mustSync bool) error {
	w.buf = w.buf[:0]
	var err error
	for _, e := range ents {
		if w.buf, err = w.appendRecord(w.buf, walEntry, e); err != nil {
			return err
		}
	}
	if hs != nil && !raft.IsEmptyHardState(hs) {
		if w.buf, err = w.appendRecord(w.buf, walHardState, hs); err != nil {
			return err
		}
	}
	if len(w.buf) == 0 {
		return nil
	}
	if need := w.off + int64(len(w.buf)); need > w.size {
		if err := w.grow(need - w.size + walChunk); err != nil {
			return err
		}
	}
	if _, err := w.f.WriteAt(w.buf, w.off); err != nil {
		return fmt.Errorf("write wal: %w", err)
	}
	w.off += int64(len(w.buf))
	if mustSync {
		if err := benchkit.SyncData(w.f); err != nil {
			return fmt.Errorf("sync wal: %w", err)
		}
	}
	return nil
}

func (w *wal) appendRecord(b []byte, typ byte, m proto.Message) ([]byte, error) {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0, typ)
	b, err := proto.MarshalOptions{}.MarshalAppend(b, m)
	if err != nil {
		return nil, fmt.Errorf("encode wal record: %w", err)
	}
	rec := b[start:]
	binary.BigEndian.PutUint32(rec[0:4], uint32(len(rec)-8))
	binary.BigEndian.PutUint32(rec[4:8], crc32.Checksum(rec[8:], walCRC))
	return b, nil
}

func (w *wal) grow(by int64) error {
	if err := benchkit.Preallocate(w.f, w.size+by); err != nil {
		return fmt.Errorf("preallocate wal: %w", err)
	}
	w.size += by
	return nil
}

func (w *wal) close() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("close wal: %w", err)
	}
	return nil
}
