package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DefaultMaxFrameSize is Kafka's socket.request.max.bytes default (100 MiB),
// a broker listener's frame cap. A Server defaults to ControllerMaxFrameSize
// and a Client to DefaultClientMaxFrameSize instead; whatever the cap, a
// Server reads no request but Produce above 1 MiB, as decoding may allocate
// up to about 100 times a frame's size (see decodeAmplification).
const DefaultMaxFrameSize = 100 << 20

// DefaultClientMaxFrameSize is a Client's default response frame cap: room
// for a KRaft Fetch or FetchSnapshot response of the quorum's 8 MiB
// (MAX_FETCH_SIZE_BYTES) and a replica Fetch response of Kafka's 10 MiB
// replica.fetch.response.max.bytes.
const DefaultClientMaxFrameSize = 16 << 20

// apiVersionsKey is ApiVersions' API key; its responses always use response
// header v0 so that a client that sent a version we do not know can still
// read the error.
const apiVersionsKey = 18

// allocStep bounds how much memory a frame's size prefix alone can make us
// allocate: larger frames grow as their bytes actually arrive, so a peer that
// announces 100 MiB and sends nothing costs 1 MiB, not 100.
const allocStep = 1 << 20

var be = binary.BigEndian

// readFrame reads one size-prefixed frame, checking the size against max
// before allocating. It returns io.EOF only for a clean end of stream between
// frames.
func readFrame(r io.Reader, size *[4]byte, max int32) ([]byte, error) {
	if got, err := io.ReadFull(r, size[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, truncated("frame size", got, len(size), err)
	}
	n := int32(be.Uint32(size[:]))
	switch {
	case n < 0:
		return nil, fmt.Errorf("invalid frame size %d", n)
	case n > max:
		return nil, fmt.Errorf("%w: %d bytes, max %d", ErrFrameTooLarge, n, max)
	}
	return readFrameBody(r, n)
}

// readFrameBody reads the n bytes of a frame whose size was read.
func readFrameBody(r io.Reader, n int32) ([]byte, error) {
	if n <= allocStep {
		frame := make([]byte, n)
		if got, err := io.ReadFull(r, frame); err != nil {
			return nil, truncated("frame", got, int(n), err)
		}
		return frame, nil
	}
	frame := make([]byte, 0, allocStep)
	for len(frame) < int(n) {
		if len(frame) == cap(frame) {
			frame = slices.Grow(frame, min(cap(frame), int(n)-len(frame)))
		}
		got, err := io.ReadFull(r, frame[len(frame):min(cap(frame), int(n))])
		frame = frame[:len(frame)+got]
		if err != nil {
			return nil, truncated("frame", len(frame), int(n), err)
		}
	}
	return frame, nil
}

func truncated(what string, got, want int, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated %s: got %d of %d bytes: %w", what, got, want, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("read %s (%d of %d bytes): %w", what, got, want, err)
}

// requestHeader is Kafka's request header: v1, or v2 (with tagged fields)
// when the request's version is flexible.
type requestHeader struct {
	key           int16
	version       int16
	correlationID int32
	clientID      []byte // aliases the frame; nil when null
}

// parseRequest splits a request frame into header and body. The returned
// request has its version set but is not decoded: the server first checks
// the version against what it serves.
func parseRequest(frame []byte) (requestHeader, kmsg.Request, []byte, error) {
	var h requestHeader
	if len(frame) < 8 {
		return h, nil, nil, fmt.Errorf("request header: %d bytes, need at least 8", len(frame))
	}
	h.key = int16(be.Uint16(frame))
	h.version = int16(be.Uint16(frame[2:]))
	h.correlationID = int32(be.Uint32(frame[4:]))
	b := frame[8:]
	req := requestForKey(h.key)
	if req == nil {
		return h, nil, nil, fmt.Errorf("unknown API key %d (correlation id %d)", h.key, h.correlationID)
	}
	req.SetVersion(h.version)
	// ControlledShutdown v0 is the one request sent with header v0, which
	// has no client id.
	if h.key == 7 && h.version == 0 {
		return h, req, b, nil
	}
	var err error
	if h.clientID, b, err = readNullableString(b); err != nil {
		return h, nil, nil, fmt.Errorf("%s v%d request header client id: %w", apiName(h.key), h.version, err)
	}
	if req.IsFlexible() {
		if b, err = skipTags(b); err != nil {
			return h, nil, nil, fmt.Errorf("%s v%d request header tagged fields: %w", apiName(h.key), h.version, err)
		}
	}
	return h, req, b, nil
}

func readNullableString(b []byte) ([]byte, []byte, error) {
	if len(b) < 2 {
		return nil, nil, fmt.Errorf("length: %d bytes left, need 2", len(b))
	}
	n := int16(be.Uint16(b))
	b = b[2:]
	switch {
	case n == -1:
		return nil, b, nil
	case n < 0:
		return nil, nil, fmt.Errorf("invalid length %d", n)
	case int(n) > len(b):
		return nil, nil, fmt.Errorf("length %d, only %d bytes left", n, len(b))
	}
	return b[:n:n], b[n:], nil
}

// skipTags skips a tagged-field section (KIP-482): a count, then per field a
// tag, a size and that many bytes, all sizes as unsigned varints.
func skipTags(b []byte) ([]byte, error) {
	count, b, err := readUvarint(b)
	if err != nil {
		return nil, fmt.Errorf("field count: %w", err)
	}
	if int(count) > len(b)/2 { // every field takes at least two bytes
		return nil, fmt.Errorf("%d fields in %d bytes", count, len(b))
	}
	for range count {
		if _, b, err = readUvarint(b); err != nil {
			return nil, fmt.Errorf("tag: %w", err)
		}
		var size uint32
		if size, b, err = readUvarint(b); err != nil {
			return nil, fmt.Errorf("size: %w", err)
		}
		if int64(size) > int64(len(b)) {
			return nil, fmt.Errorf("field of %d bytes, only %d left", size, len(b))
		}
		b = b[size:]
	}
	return b, nil
}

func readUvarint(b []byte) (uint32, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 || v > 1<<32-1 {
		return 0, nil, errors.New("invalid unsigned varint")
	}
	return uint32(v), b[n:], nil
}

// appendRequest appends req as one frame with request header v1, or v2
// for flexible versions. (kmsg's RequestFormatter writes the size at the
// start of its buffer, so it cannot append a frame behind others.)
func appendRequest(dst []byte, req kmsg.Request, correlationID int32, clientID string) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = be.AppendUint16(dst, uint16(req.Key()))
	dst = be.AppendUint16(dst, uint16(req.GetVersion()))
	dst = be.AppendUint32(dst, uint32(correlationID))
	// ControlledShutdown v0 uses header v0, which ends here.
	if req.Key() != 7 || req.GetVersion() != 0 {
		dst = be.AppendUint16(dst, uint16(len(clientID)))
		dst = append(dst, clientID...)
		if req.IsFlexible() {
			dst = append(dst, 0) // no tagged fields
		}
	}
	dst = req.AppendTo(dst)
	be.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// appendResponse appends resp as a frame answering correlationID: response
// header v1 for flexible versions, v0 otherwise and always for ApiVersions.
func appendResponse(dst []byte, resp kmsg.Response, correlationID int32) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = be.AppendUint32(dst, uint32(correlationID))
	if resp.IsFlexible() && resp.Key() != apiVersionsKey {
		dst = append(dst, 0) // no tagged fields
	}
	dst = resp.AppendTo(dst)
	be.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// decodeResponse decodes the body of a response frame (after the correlation
// id) as the answer to req.
func decodeResponse(b []byte, req kmsg.Request) (kmsg.Response, error) {
	key, version := req.Key(), req.GetVersion()
	if req.IsFlexible() && key != apiVersionsKey {
		var err error
		if b, err = skipTags(b); err != nil {
			return nil, fmt.Errorf("%s v%d response header tagged fields: %w", apiName(key), version, err)
		}
	}
	// A server that does not serve our ApiVersions version answers v0
	// with UNSUPPORTED_VERSION (KIP-511).
	if key == apiVersionsKey && len(b) >= 2 && int16(be.Uint16(b)) == errUnsupportedVersion {
		version = 0
	}
	resp := req.ResponseKind()
	resp.SetVersion(version)
	if len(b) >= largeFrame {
		largeDecode.Lock()
		defer largeDecode.Unlock()
	}
	if err := decodeBody(resp, b); err != nil {
		return nil, fmt.Errorf("decode %s v%d response: %w", apiName(key), version, err)
	}
	return resp, nil
}

// decodeBody decodes a request or response body. kmsg is generated code for
// some 95 APIs and many versions; should any of it panic on hostile bytes,
// that must cost one connection, not the whole playground.
func decodeBody(m interface{ ReadFrom([]byte) error }, b []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoder panic: %v", r)
		}
	}()
	return m.ReadFrom(b)
}
