package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceKey is Produce's API key.
const produceKey = 0

// What kmsg allocates per element of a decoded ProduceRequest.
var (
	produceRequestSize   = int64(reflect.TypeFor[kmsg.ProduceRequest]().Size())
	produceTopicSize     = int64(reflect.TypeFor[kmsg.ProduceRequestTopic]().Size())
	producePartitionSize = int64(reflect.TypeFor[kmsg.ProduceRequestTopicPartition]().Size())
)

// A map of unknown tagged fields: what a Go map costs at first and per
// entry, the tables it outgrew included (the values alias the frame).
// Measured: about 160 bytes an entry at 64,000 entries.
const (
	tagMapBytes   = 1 << 10
	tagEntryBytes = 256
)

// boundSlack covers the small allocations of a decode that the bound does
// not count one by one (the race detector's among them).
const boundSlack = 1 << 10

// allocated is what allocating n bytes takes from the heap: Go rounds a
// small allocation up to its size class (at most an eighth more) and a
// large one up to whole pages.
func allocated(n int64) int64 {
	if n <= 0 {
		return 0
	}
	if n <= 32<<10 {
		return n + n/8 + 16
	}
	return n + 8<<10
}

var errShortProduce = errors.New("produce request ends early")

// produceDecodeBound walks a Produce request body of version v as kmsg's
// ProduceRequest.ReadFrom does, without allocating, and returns an upper
// bound of what decoding it allocates: its topics and partitions, their
// strings and unknown tags. Record batches are []byte fields that alias
// the frame, so a 100 MiB Produce of a few batches costs a few hundred
// bytes to decode, while a dense one (many empty partitions) costs what
// the same bytes of any other request would.
func produceDecodeBound(b []byte, v int16) (int64, error) {
	r := boundReader{b: b, flexible: v >= 9}
	n := produceRequestSize + boundSlack
	if v >= 3 {
		n += allocated(r.str()) // transactional id
	}
	r.skip(2 + 4) // acks, timeout
	minTopic := int64(2)
	if v >= 13 {
		minTopic = 18
	}
	topics := r.count(minTopic)
	n += allocated(topics * produceTopicSize)
	for range topics {
		if v >= 13 {
			r.skip(16) // topic id
		} else {
			n += allocated(r.str())
		}
		parts := r.count(6)
		n += allocated(parts * producePartitionSize)
		for range parts {
			r.skip(4) // partition index
			r.bytes() // records: aliased
			if r.flexible {
				n += r.tags()
			}
		}
		if r.flexible {
			n += r.tags()
		}
	}
	if r.flexible {
		n += r.tags()
	}
	if r.err != nil {
		return 0, fmt.Errorf("decode Produce v%d: %w", v, r.err)
	}
	return n, nil
}

// boundReader reads Kafka's primitive types for produceDecodeBound; after
// the first error every read returns zero.
type boundReader struct {
	b        []byte
	flexible bool
	err      error
}

func (r *boundReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *boundReader) skip(n int) {
	if n > len(r.b) {
		r.fail(errShortProduce)
		return
	}
	r.b = r.b[n:]
}

// uvarint reads an unsigned varint of at most 32 bits, as kbin does.
func (r *boundReader) uvarint() uint32 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > 1<<32-1 {
		r.fail(errors.New("invalid unsigned varint"))
		return 0
	}
	r.b = r.b[n:]
	return uint32(v)
}

func (r *boundReader) int32() int32 {
	if len(r.b) < 4 {
		r.fail(errShortProduce)
		return 0
	}
	n := int32(binary.BigEndian.Uint32(r.b))
	r.b = r.b[4:]
	return n
}

// str skips a (nullable) string and returns the bytes decoding copies.
func (r *boundReader) str() int64 {
	var n int64
	if r.flexible {
		n = int64(r.uvarint()) - 1
	} else {
		if len(r.b) < 2 {
			r.fail(errShortProduce)
			return 0
		}
		n = int64(int16(binary.BigEndian.Uint16(r.b)))
		r.b = r.b[2:]
	}
	if n < 0 {
		return 0
	}
	r.skip64(n)
	return n
}

// bytes skips a nullable byte array, which decoding does not copy.
func (r *boundReader) bytes() {
	if r.flexible {
		r.skip64(int64(r.uvarint()) - 1)
	} else {
		r.skip64(int64(r.int32()))
	}
}

func (r *boundReader) skip64(n int64) {
	if n > int64(len(r.b)) {
		r.fail(errShortProduce)
		return
	}
	r.skip(int(max(n, 0)))
}

// count reads an array length whose elements take at least min bytes
// each, with kmsg's arithmetic and checks.
func (r *boundReader) count(min int64) int64 {
	var n int32
	if r.flexible {
		n = int32(r.uvarint()) - 1
	} else {
		n = r.int32()
	}
	if int64(n) > int64(len(r.b)) || int64(n)*min > int64(len(r.b)) {
		r.fail(errShortProduce)
		return 0
	}
	return int64(max(n, 0))
}

// tags skips a tagged-field section and returns what its map costs.
func (r *boundReader) tags() int64 {
	n := int64(r.uvarint())
	if n == 0 {
		return 0
	}
	if n > int64(len(r.b))/2 {
		r.fail(errShortProduce)
		return 0
	}
	for range n {
		r.uvarint() // tag
		r.skip64(int64(r.uvarint()))
	}
	return tagMapBytes + tagEntryBytes*n
}
