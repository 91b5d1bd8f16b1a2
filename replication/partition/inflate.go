package partition

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Codec is a batch's compression, as its attributes' low three bits
// name it (Kafka's CompressionType ids).
type Codec int8

// Codecs.
const (
	CodecNone Codec = iota
	CodecGzip
	CodecSnappy
	CodecLZ4
	CodecZstd
)

// String returns Kafka's name of the codec.
func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec %d", int8(c))
}

// InflationFactor bounds what a compressed batch may decompress to: this
// many times message.max.bytes (64 MiB at Kafka's default). Kafka bounds
// only the compressed size; a producer with Kafka's defaults builds
// batches of at most max.request.size (1 MiB) uncompressed, and franz-go
// consumers refuse batches over 1 GiB, so what passes here is readable.
// The records are checked as a stream, so the bound costs CPU time, never
// memory.
const InflationFactor = 64

// errInflated is a compressed batch whose records decompress past the
// bound.
var errInflated = errors.New("decompressed records exceed the bound")

// inflater streams the records of one compressed batch.
type inflater struct {
	codec Codec
	src   bytes.Reader
	lim   io.LimitedReader
	buf   *bufio.Reader

	gz  *gzip.Reader
	lz  *lz4.Reader
	zd  *zstd.Decoder
	snp snappyReader
}

var inflaters = sync.Pool{New: func() any {
	in := &inflater{buf: bufio.NewReaderSize(nil, 16<<10)}
	return in
}}

// zstdMaxWindow bounds the window a zstd frame may ask the decoder to
// keep: Kafka's producers use levels whose windows are at most 8 MiB
// (zstd's level 19), and no batch of ours is larger than its bound.
const zstdMaxWindow = 8 << 20

// openInflater returns a reader of the records compressed in payload, which
// yields at most limit+1 bytes (one more, so that the caller tells a batch
// of exactly limit bytes from a larger one). Release it when done.
func openInflater(codec Codec, payload []byte, limit int64) (*inflater, error) {
	in := inflaters.Get().(*inflater)
	in.codec = codec
	in.src.Reset(payload)
	var r io.Reader
	switch codec {
	case CodecGzip:
		if in.gz == nil {
			in.gz = new(gzip.Reader)
		}
		if err := in.gz.Reset(&in.src); err != nil {
			in.release()
			return nil, fmt.Errorf("gzip: %w", err)
		}
		r = in.gz
	case CodecSnappy:
		in.snp.reset(payload, limit)
		r = &in.snp
	case CodecLZ4:
		if in.lz == nil {
			in.lz = lz4.NewReader(nil)
		}
		in.lz.Reset(&in.src)
		r = in.lz
	case CodecZstd:
		if in.zd == nil {
			zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderMaxMemory(uint64(max(limit, zstdMaxWindow))+1))
			if err != nil {
				in.release()
				return nil, fmt.Errorf("zstd: %w", err)
			}
			in.zd = zd
		}
		if err := in.zd.Reset(&in.src); err != nil {
			in.release()
			return nil, fmt.Errorf("zstd: %w", err)
		}
		r = in.zd
	default:
		in.release()
		return nil, fmt.Errorf("unknown compression codec %d", codec)
	}
	in.lim = io.LimitedReader{R: r, N: limit + 1}
	in.buf.Reset(&in.lim)
	return in, nil
}

// release returns the inflater to the pool, dropping its hold on the
// batch.
func (in *inflater) release() {
	in.src.Reset(nil)
	in.snp.reset(nil, 0)
	in.buf.Reset(nil)
	in.lim.R = nil
	if in.zd != nil {
		// Drops the stream; the decoder's buffers stay for the next batch.
		in.zd.Reset(nil)
	}
	inflaters.Put(in)
}

// snappyReader reads Kafka's snappy: xerial framing (the Java producer's
// SnappyOutputStream: a 16-byte header, then blocks each prefixed by its
// big-endian length) or a single raw block (franz-go's), decoding one
// block at a time.
type snappyReader struct {
	rest  []byte // blocks not decoded yet
	xer   bool
	out   []byte // the decoded block being read
	at    int
	limit int64
	err   error
}

var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// snappyMaxRatio bounds how far a snappy block can expand: its largest
// copy element writes 64 bytes from 3, so a block claiming more is not
// snappy, and decoding it is never attempted.
const snappyMaxRatio = 22

func (s *snappyReader) reset(payload []byte, limit int64) {
	*s = snappyReader{out: s.out[:0], limit: limit}
	if len(payload) >= 16 && bytes.HasPrefix(payload, xerialMagic) {
		s.xer, s.rest = true, payload[16:]
		return
	}
	s.rest = payload
}

func (s *snappyReader) Read(p []byte) (int, error) {
	for s.at == len(s.out) {
		if s.err != nil {
			return 0, s.err
		}
		if len(s.rest) == 0 {
			return 0, io.EOF
		}
		if s.err = s.next(); s.err != nil {
			return 0, s.err
		}
	}
	n := copy(p, s.out[s.at:])
	s.at += n
	return n, nil
}

// next decodes the next block into out.
func (s *snappyReader) next() error {
	block := s.rest
	if s.xer {
		if len(s.rest) < 4 {
			return errors.New("snappy: torn xerial block length")
		}
		n := binary.BigEndian.Uint32(s.rest)
		if uint64(n) > uint64(len(s.rest)-4) {
			return fmt.Errorf("snappy: xerial block of %d bytes past the batch's end", n)
		}
		block, s.rest = s.rest[4:4+n], s.rest[4+n:]
	} else {
		s.rest = nil
	}
	n, err := s2.DecodedLen(block)
	if err != nil {
		return fmt.Errorf("snappy: %w", err)
	}
	if n > snappyMaxRatio*len(block)+16 {
		return fmt.Errorf("snappy: a block of %d bytes claims %d", len(block), n)
	}
	if int64(n) > s.limit+1 {
		return errInflated
	}
	if cap(s.out) < n {
		s.out = make([]byte, n)
	}
	out, err := s2.Decode(s.out[:n], block)
	if err != nil {
		return fmt.Errorf("snappy: %w", err)
	}
	s.out, s.at = out, 0
	return nil
}
