package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// sampleRequests covers header v1 and v2, ControlledShutdown v0's header v0,
// and a null client id.
func sampleRequests() []kmsg.Request {
	av0 := kmsg.NewPtrApiVersionsRequest()
	av3 := kmsg.NewPtrApiVersionsRequest()
	av3.Version, av3.ClientSoftwareName, av3.ClientSoftwareVersion = 3, "kgo", "1.22.3"
	begin := kmsg.NewPtrBeginQuorumEpochRequest()
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version = 17
	ft := kmsg.NewFetchRequestTopic()
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.FetchOffset = 77
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	shutdown := kmsg.NewPtrControlledShutdownRequest()
	shutdown.BrokerID = 101
	return []kmsg.Request{av0, av3, voteRequest(3, true), begin, fetch, shutdown}
}

func TestRequestFramesMatchKmsgFormatter(t *testing.T) {
	for _, req := range sampleRequests() {
		name := kmsg.NameForKey(req.Key())
		ours := appendRequest([]byte("prefix"), req, 9, "kraftlab-node-1")
		theirs := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kraftlab-node-1")).AppendRequest(nil, req, 9)
		if req.Key() == 7 && req.GetVersion() == 0 {
			// kmsg's formatter stops after the header for this one
			// (it leaves that special format to its caller), so
			// compare with ours instead.
			theirs = ours[len("prefix"):]
		} else if !bytes.Equal(ours[len("prefix"):], theirs) {
			t.Fatalf("%s v%d: our frame %x, kmsg's %x", name, req.GetVersion(), ours[6:], theirs)
		}
		var size [4]byte
		frame, err := readFrame(bytes.NewReader(theirs), &size, DefaultMaxFrameSize)
		if err != nil {
			t.Fatal(err)
		}
		h, parsed, body, err := parseRequest(frame)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if h.key != req.Key() || h.version != req.GetVersion() || h.correlationID != 9 {
			t.Fatalf("%s: header %+v", name, h)
		}
		if err := parsed.ReadFrom(body); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(parsed.AppendTo(nil), req.AppendTo(nil)) {
			t.Fatalf("%s: body did not survive the round trip", name)
		}
	}
}

func TestReadFrameGrowsLargeFramesAsBytesArrive(t *testing.T) {
	payload := bytes.Repeat([]byte("kraftlab"), 3<<20/8)
	var size [4]byte
	frame, err := readFrame(bytes.NewReader(append(be.AppendUint32(nil, uint32(len(payload))), payload...)), &size, DefaultMaxFrameSize)
	if err != nil || !bytes.Equal(frame, payload) {
		t.Fatalf("3 MiB frame: %v", err)
	}
	// A 90 MiB claim with 10 bytes behind it fails as truncated.
	_, err = readFrame(bytes.NewReader(append(be.AppendUint32(nil, 90<<20), make([]byte, 10)...)), &size, DefaultMaxFrameSize)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated 90 MiB frame: %v", err)
	}
	if _, err := readFrame(bytes.NewReader(nil), &size, 10); err != io.EOF {
		t.Fatalf("empty stream: %v, want io.EOF", err)
	}
}

// FuzzReadRequest feeds arbitrary bytes to the server's decoding path:
// frames, request headers and kmsg bodies. Nothing may panic, and a request
// that decodes must re-encode to a frame that decodes the same.
func FuzzReadRequest(f *testing.F) {
	for _, req := range sampleRequests() {
		f.Add(appendRequest(nil, req, 1, "kraftlab-node-1"))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		br := bufio.NewReader(bytes.NewReader(b))
		var size [4]byte
		for {
			frame, err := readFrame(br, &size, 1<<16)
			if err != nil {
				return
			}
			h, req, body, err := parseRequest(frame)
			if err != nil {
				continue
			}
			if h.key != req.Key() || h.version != req.GetVersion() {
				t.Fatalf("header %+v parsed into %s v%d", h, kmsg.NameForKey(req.Key()), req.GetVersion())
			}
			if h.version < 0 || h.version > req.MaxVersion() {
				continue // answered UNSUPPORTED_VERSION, never decoded
			}
			// Not decodeBody: its recover would hide a kmsg panic
			// from the fuzzer.
			if req.ReadFrom(body) != nil {
				continue
			}
			again := appendRequest(nil, req, h.correlationID, string(h.clientID))
			frame2, err := readFrame(bytes.NewReader(again), &size, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			h2, req2, body2, err := parseRequest(frame2)
			if err != nil {
				t.Fatalf("re-encoded %s v%d: %v", kmsg.NameForKey(h.key), h.version, err)
			}
			if h2.key != h.key || h2.version != h.version || h2.correlationID != h.correlationID || !bytes.Equal(h2.clientID, h.clientID) {
				t.Fatalf("header %+v re-encoded as %+v", h, h2)
			}
			if err := req2.ReadFrom(body2); err != nil {
				t.Fatalf("re-encoded %s v%d body: %v", kmsg.NameForKey(h.key), h.version, err)
			}
			if !bytes.Equal(req2.AppendTo(nil), body2) {
				t.Fatalf("%s v%d does not re-encode to the same bytes", kmsg.NameForKey(h.key), h.version)
			}
		}
	})
}
