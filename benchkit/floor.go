package benchkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"
)

const (
	rttBytes     = 64
	fsyncBytes   = 4 << 10
	floorMinimum = 20 // samples, however slow the machine
	// fsyncFile is the size of the preallocated file the fsync floor
	// writes into, so that a sync never also has to grow the file.
	fsyncFile = 64 << 20
)

// Floors are the costs no replicated log on this machine can beat: one
// loopback TCP round trip (flush never) and one synced disk write (flush
// always). The report divides commit latency by them.
type Floors struct {
	RTT   Latency `json:"rtt"`
	Fsync Latency `json:"fsync"`
	// MajorityFsync is one 4 KiB write + fdatasync on each of
	// DefaultVoters files at once, timed until a majority of them has
	// synced: the disk's part of a commit when every voter of a quorum
	// keeps its log on this one disk, where syncs wait for each other.
	MajorityFsync Latency `json:"majorityFsync"`
	// OpenLoop is what the open-loop scheduler alone adds to a record's
	// latency at each rate the run uses: waking on time and handing the
	// record to a worker.
	OpenLoop []RateFloor `json:"openLoop,omitempty"`
}

// RateFloor is the open-loop scheduler's own latency at one rate.
type RateFloor struct {
	Rate    int     `json:"ratePerSec"`
	Latency Latency `json:"latency"`
}

// measureRTT ping-pongs 64-byte messages over a loopback TCP connection for
// about d.
func measureRTT(d time.Duration) (Latency, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Latency{}, fmt.Errorf("rtt floor: listen: %w", err)
	}
	defer ln.Close()
	echoed := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			echoed <- err
			return
		}
		defer c.Close()
		buf := make([]byte, rttBytes)
		for {
			if _, err := io.ReadFull(c, buf); err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				echoed <- err
				return
			}
			if _, err := c.Write(buf); err != nil {
				echoed <- err
				return
			}
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return Latency{}, fmt.Errorf("rtt floor: dial: %w", err)
	}
	h := newHistogram()
	buf := make([]byte, rttBytes)
	deadline := time.Now().Add(d)
	for n := 0; n < floorMinimum || time.Now().Before(deadline); n++ {
		begin := time.Now()
		if _, err = c.Write(buf); err != nil {
			break
		}
		if _, err = io.ReadFull(c, buf); err != nil {
			break
		}
		h.record(time.Since(begin))
	}
	c.Close()
	if echoErr := <-echoed; err == nil {
		err = echoErr
	}
	if err != nil {
		return Latency{}, fmt.Errorf("rtt floor: %w", err)
	}
	return h.summary(), nil
}

// measureFsync writes 4 KiB at a time to a fresh preallocated file in dir,
// syncing after each write, for about d: the cost of making one small
// append durable on the disk that holds the benchmark's data.
func measureFsync(dir string, d time.Duration) (Latency, error) {
	f, err := newSyncFile(dir, "fsync-floor")
	if err != nil {
		return Latency{}, err
	}
	defer f.close()
	h := newHistogram()
	deadline := time.Now().Add(d)
	for n := 0; n < floorMinimum || time.Now().Before(deadline); n++ {
		begin := time.Now()
		if err := f.writeAndSync(); err != nil {
			return Latency{}, err
		}
		h.record(time.Since(begin))
	}
	return h.summary(), nil
}

// measureMajorityFsync does what measureFsync does on voters files at
// once, each round timed until a majority has synced and ended once all
// have, for about d.
func measureMajorityFsync(dir string, voters int, d time.Duration) (Latency, error) {
	files := make([]*syncFile, voters)
	for i := range files {
		f, err := newSyncFile(dir, fmt.Sprintf("fsync-floor-%d", i))
		if err != nil {
			return Latency{}, err
		}
		defer f.close()
		files[i] = f
	}
	majority := voters/2 + 1
	synced := make(chan error, voters)
	h := newHistogram()
	deadline := time.Now().Add(d)
	for n := 0; n < floorMinimum || time.Now().Before(deadline); n++ {
		begin := time.Now()
		for _, f := range files {
			go func() { synced <- f.writeAndSync() }()
		}
		var first error
		for i := range voters {
			if err := <-synced; err != nil && first == nil {
				first = err
			}
			if i+1 == majority {
				h.record(time.Since(begin))
			}
		}
		if first != nil {
			return Latency{}, first
		}
	}
	return h.summary(), nil
}

// syncFile is a fresh preallocated file that a floor writes 4 KiB at a
// time, round and round, so that a sync never also has to grow it.
type syncFile struct {
	f   *os.File
	off int64
}

func newSyncFile(dir, name string) (*syncFile, error) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("fsync floor: %w", err)
	}
	if err := Preallocate(f, fsyncFile); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("fsync floor: preallocate: %w", err)
	}
	return &syncFile{f: f}, nil
}

var syncBlock = make([]byte, fsyncBytes)

func (s *syncFile) writeAndSync() error {
	if s.off+fsyncBytes > fsyncFile {
		s.off = 0
	}
	if _, err := s.f.WriteAt(syncBlock, s.off); err != nil {
		return fmt.Errorf("fsync floor: write: %w", err)
	}
	if err := SyncData(s.f); err != nil {
		return fmt.Errorf("fsync floor: sync: %w", err)
	}
	s.off += fsyncBytes
	return nil
}

func (s *syncFile) close() {
	s.f.Close()
	os.Remove(s.f.Name())
}

// measureOpenLoop drives a system that commits every record instantly at
// rate records per second for about d.
func measureOpenLoop(ctx context.Context, rate int, d time.Duration) (Latency, error) {
	m, err := drive(ctx, instant{}, rttBytes, load{Rate: rate}, timing{Window: d, Drain: defaultDrain})
	if err != nil {
		return Latency{}, fmt.Errorf("open-loop floor at %d/s: %w", rate, err)
	}
	return m.Latency, nil
}

// instant is a System whose every record commits at once. It never runs as
// a contestant; the open-loop floor drives it.
type instant struct{}

func (instant) Name() string                                { return "instant" }
func (instant) Start(string, bool) error                    { return nil }
func (instant) Propose(ctx context.Context, _ []byte) error { return ctx.Err() }
func (instant) Close() error                                { return nil }

// measureLoopbackThroughput streams 1 MiB writes over one loopback TCP
// connection for about d and returns the MB/s the reader received: the
// ceiling of anything that moves bytes between two local processes.
func measureLoopbackThroughput(d time.Duration) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("loopback throughput: listen: %w", err)
	}
	defer ln.Close()
	type result struct {
		n   int64
		err error
	}
	got := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- result{err: err}
			return
		}
		defer c.Close()
		n, err := io.Copy(io.Discard, c)
		got <- result{n, err}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0, fmt.Errorf("loopback throughput: dial: %w", err)
	}
	buf := make([]byte, 1<<20)
	start := time.Now()
	for time.Since(start) < d {
		if _, err := c.Write(buf); err != nil {
			c.Close()
			return 0, fmt.Errorf("loopback throughput: write: %w", err)
		}
	}
	c.Close()
	r := <-got
	took := time.Since(start)
	if r.err != nil {
		return 0, fmt.Errorf("loopback throughput: read: %w", r.err)
	}
	return float64(r.n) / 1e6 / took.Seconds(), nil
}
