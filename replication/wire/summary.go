package wire

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Direction is which way a message goes on its connection.
type Direction uint8

// The directions.
const (
	// DirRequest: a request on its way to the server.
	DirRequest Direction = iota + 1
	// DirResponse: a response on its way back to the client.
	DirResponse
)

func (d Direction) String() string {
	switch d {
	case DirRequest:
		return "request"
	case DirResponse:
		return "response"
	}
	return "direction(" + strconv.Itoa(int(d)) + ")"
}

// Field is one decoded field of a message, as a learner reads it.
type Field struct {
	Name  string
	Value string
}

// maxSummaryPartitions bounds how many partitions a summary names; a
// broker's fetch of many partitions shows the first ones and a count.
const maxSummaryPartitions = 4

// maxSummaryFields bounds a summary, whatever a frame holds (a Vote with
// a thousand partitions); past it the summary ends with "more".
const maxSummaryFields = 32

// Summarize decodes the fields of one frame that matter for learning:
// for Fetch the offsets, epochs, high watermark and records; for the
// quorum's Vote, BeginQuorumEpoch and EndQuorumEpoch the epochs and
// leaders; for BrokerHeartbeat, AlterPartition and FetchSnapshot what
// they ask and answer. Other APIs get no fields. frame is the frame
// without its size: a request with its header, or a response from its
// correlation id, answering API key at version. The decoding is bounded
// by the frame; a frame that does not decode is summarised by an error.
func Summarize(dir Direction, key, version int16, frame []byte) ([]Field, error) {
	var m interface{ ReadFrom([]byte) error }
	switch dir {
	case DirRequest:
		h, req, body, err := parseRequest(frame)
		if err != nil {
			return nil, err
		}
		if h.key != key || h.version != version {
			return nil, fmt.Errorf("frame holds %s v%d, not %s v%d", apiName(h.key), h.version, apiName(key), version)
		}
		if !summarised(key) {
			return nil, nil
		}
		if err := decodeBody(req, body); err != nil {
			return nil, fmt.Errorf("decode %s v%d request: %w", apiName(key), version, err)
		}
		m = req
	case DirResponse:
		req := requestForKey(key)
		if req == nil {
			return nil, fmt.Errorf("unknown API key %d", key)
		}
		if len(frame) < 4 {
			return nil, fmt.Errorf("%d-byte response has no correlation id", len(frame))
		}
		if !summarised(key) {
			return nil, nil
		}
		req.SetVersion(version)
		resp, err := decodeResponse(frame[4:], req)
		if err != nil {
			return nil, err
		}
		m = resp
	default:
		return nil, fmt.Errorf("summarise a frame going %v", dir)
	}
	return summarize(m), nil
}

// summarize returns the fields of a decoded request or response that
// Summarize names; none for the other APIs.
func summarize(m any) []Field {
	var s fields
	switch v := m.(type) {
	case *kmsg.FetchRequest:
		s.fetchRequest(v)
	case *kmsg.FetchResponse:
		s.fetchResponse(v)
	case *kmsg.VoteRequest:
		s.voteRequest(v)
	case *kmsg.VoteResponse:
		s.voteResponse(v)
	case *kmsg.BeginQuorumEpochRequest:
		for _, t := range v.Topics {
			for _, p := range t.Partitions {
				s.add("leader", p.LeaderID)
				s.add("epoch", p.LeaderEpoch)
			}
		}
	case *kmsg.BeginQuorumEpochResponse:
		s.quorumResponse(v.ErrorCode)
		for _, t := range v.Topics {
			for _, p := range t.Partitions {
				s.quorumResponse(p.ErrorCode)
				s.add("leader", p.LeaderID)
				s.add("epoch", p.LeaderEpoch)
			}
		}
	case *kmsg.EndQuorumEpochRequest:
		for _, t := range v.Topics {
			for _, p := range t.Partitions {
				s.add("leader", p.LeaderID)
				s.add("epoch", p.LeaderEpoch)
				if len(p.PreferredSuccessors) > 0 {
					s.add("preferred successors", ints(p.PreferredSuccessors))
				}
			}
		}
	case *kmsg.EndQuorumEpochResponse:
		s.quorumResponse(v.ErrorCode)
		for _, t := range v.Topics {
			for _, p := range t.Partitions {
				s.quorumResponse(p.ErrorCode)
				s.add("leader", p.LeaderID)
				s.add("epoch", p.LeaderEpoch)
			}
		}
	case *kmsg.BrokerHeartbeatRequest:
		s.add("broker", v.BrokerID)
		s.add("broker epoch", v.BrokerEpoch)
		s.add("metadata offset", v.CurrentMetadataOffset)
		s.add("wants fence", v.WantFence)
		if v.WantShutdown {
			s.add("wants shutdown", true)
		}
	case *kmsg.BrokerHeartbeatResponse:
		s.errorCode("error", v.ErrorCode)
		s.add("caught up", v.IsCaughtUp)
		s.add("fenced", v.IsFenced)
		if v.ShouldShutdown {
			s.add("should shut down", true)
		}
	case *kmsg.AlterPartitionRequest:
		s.alterPartitionRequest(v)
	case *kmsg.AlterPartitionResponse:
		s.alterPartitionResponse(v)
	case *kmsg.FetchSnapshotRequest:
		s.fetchSnapshotRequest(v)
	case *kmsg.FetchSnapshotResponse:
		s.fetchSnapshotResponse(v)
	}
	return s.f
}

// summarised reports whether Summarize decodes the fields of API key.
func summarised(key int16) bool {
	switch kmsg.Key(key) {
	case kmsg.Fetch, kmsg.Vote, kmsg.BeginQuorumEpoch, kmsg.EndQuorumEpoch,
		kmsg.BrokerHeartbeat, kmsg.AlterPartition, kmsg.FetchSnapshot:
		return true
	}
	return false
}

// fields collects a summary's fields; a partition's fields are prefixed
// with its name once a message carries more than one.
type fields struct {
	f      []Field
	prefix string
	parts  int // partitions seen
}

func (s *fields) add(name string, v any) {
	switch {
	case len(s.f) < maxSummaryFields:
		s.f = append(s.f, Field{Name: s.prefix + name, Value: fmt.Sprint(v)})
	case len(s.f) == maxSummaryFields:
		s.f = append(s.f, Field{Name: "more", Value: "…"})
	}
}

// errorCode adds a Kafka error code by its name, unless it is none.
func (s *fields) errorCode(name string, code int16) {
	if code != 0 {
		s.add(name, errName(code))
	}
}

// quorumResponse adds a quorum response's error, unless it is none.
func (s *fields) quorumResponse(code int16) { s.errorCode("error", code) }

// partition starts a partition's fields, and reports false past the
// partitions a summary names (it then counts the rest).
func (s *fields) partition(topic string, p int32, total int) bool {
	s.parts++
	if s.parts > maxSummaryPartitions {
		if s.parts == total {
			s.prefix = ""
			s.add("more partitions", total-maxSummaryPartitions)
		}
		return false
	}
	s.prefix = ""
	if total > 1 {
		if topic == "" {
			topic = "partition "
		} else {
			topic += "-"
		}
		s.prefix = topic + strconv.Itoa(int(p)) + " "
	}
	return true
}

func errName(code int16) string {
	if err := kerr.ErrorForCode(code); err != nil {
		if ke, ok := err.(*kerr.Error); ok {
			return ke.Message
		}
		return err.Error()
	}
	return "code " + strconv.Itoa(int(code))
}

func ints(v []int32) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(int(n))
	}
	return "[" + strings.Join(s, " ") + "]"
}

func (s *fields) fetchRequest(v *kmsg.FetchRequest) {
	replica := v.ReplicaID
	if v.Version >= 15 {
		replica = v.ReplicaState.ID
	}
	s.add("replica", replica)
	total := 0
	for _, t := range v.Topics {
		total += len(t.Partitions)
	}
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			if !s.partition(t.Topic, p.Partition, total) {
				continue
			}
			s.add("fetch offset", p.FetchOffset)
			if v.Version >= 12 {
				s.add("last fetched epoch", p.LastFetchedEpoch)
			}
		}
	}
}

func (s *fields) fetchResponse(v *kmsg.FetchResponse) {
	s.errorCode("error", v.ErrorCode)
	total := 0
	for _, t := range v.Topics {
		total += len(t.Partitions)
	}
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			if !s.partition(t.Topic, p.Partition, total) {
				continue
			}
			s.errorCode("error", p.ErrorCode)
			s.add("high watermark", p.HighWatermark)
			n, bytes := countRecords(p.RecordBatches)
			s.add("records", n)
			s.add("record bytes", bytes)
			if d := p.DivergingEpoch; d.Epoch >= 0 {
				s.add("diverging epoch", d.Epoch)
				s.add("diverging end offset", d.EndOffset)
			}
			if id := p.SnapshotID; id.Epoch >= 0 && id.EndOffset >= 0 {
				s.add("snapshot", fmt.Sprintf("end offset %d epoch %d", id.EndOffset, id.Epoch))
			}
		}
	}
}

// Record batch layout (v2): a batch's records count is the int32 at
// recordsCountAt, after the base offset, length, leader epoch, magic,
// crc, attributes, last offset delta, timestamps, producer id and epoch
// and base sequence; the length counts the bytes after itself.
const (
	batchLengthAt  = 8
	batchHeaderLen = 12
	recordsCountAt = 57
)

// countRecords counts the records of the whole batches in b, trusting no
// length: it stops at the first batch that does not fit in b.
func countRecords(b []byte) (records int64, bytes int) {
	for len(b) >= recordsCountAt+4 {
		n := int64(int32(be.Uint32(b[batchLengthAt:])))
		if n < recordsCountAt+4-batchHeaderLen || n > int64(len(b)-batchHeaderLen) {
			break
		}
		if c := int32(be.Uint32(b[recordsCountAt:])); c > 0 {
			records += int64(c)
		}
		size := batchHeaderLen + int(n)
		bytes += size
		b = b[size:]
	}
	return records, bytes
}

func (s *fields) voteRequest(v *kmsg.VoteRequest) {
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			if p.PreVote {
				s.add("pre-vote", true)
			}
			s.add("candidate", p.CandidateID)
			s.add("candidate epoch", p.CandidateEpoch)
			s.add("last offset", p.LastOffset)
			s.add("last offset epoch", p.LastOffsetEpoch)
		}
	}
}

func (s *fields) voteResponse(v *kmsg.VoteResponse) {
	s.errorCode("error", v.ErrorCode)
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			s.errorCode("error", p.ErrorCode)
			s.add("granted", p.VoteGranted)
			s.add("leader", p.LeaderID)
			s.add("epoch", p.LeaderEpoch)
		}
	}
}

func (s *fields) alterPartitionRequest(v *kmsg.AlterPartitionRequest) {
	s.add("broker", v.BrokerID)
	s.add("broker epoch", v.BrokerEpoch)
	total := 0
	for _, t := range v.Topics {
		total += len(t.Partitions)
	}
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			if !s.partition(t.Topic, p.Partition, total) {
				continue
			}
			isr := p.NewISR
			for _, r := range p.NewEpochISR {
				isr = append(isr, r.BrokerID)
			}
			s.add("new ISR", ints(isr))
			s.add("leader epoch", p.LeaderEpoch)
			s.add("partition epoch", p.PartitionEpoch)
		}
	}
}

func (s *fields) alterPartitionResponse(v *kmsg.AlterPartitionResponse) {
	s.errorCode("error", v.ErrorCode)
	total := 0
	for _, t := range v.Topics {
		total += len(t.Partitions)
	}
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			if !s.partition("", p.Partition, total) {
				continue
			}
			s.errorCode("error", p.ErrorCode)
			s.add("ISR", ints(p.ISR))
			s.add("leader", p.LeaderID)
			s.add("leader epoch", p.LeaderEpoch)
			s.add("partition epoch", p.PartitionEpoch)
		}
	}
}

func (s *fields) fetchSnapshotRequest(v *kmsg.FetchSnapshotRequest) {
	s.add("replica", v.ReplicaID)
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			s.add("snapshot", fmt.Sprintf("end offset %d epoch %d", p.SnapshotID.EndOffset, p.SnapshotID.Epoch))
			s.add("position", p.Position)
		}
	}
}

func (s *fields) fetchSnapshotResponse(v *kmsg.FetchSnapshotResponse) {
	s.errorCode("error", v.ErrorCode)
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			s.errorCode("error", p.ErrorCode)
			s.add("snapshot", fmt.Sprintf("end offset %d epoch %d", p.SnapshotID.EndOffset, p.SnapshotID.Epoch))
			s.add("size", p.Size)
			s.add("position", p.Position)
			s.add("bytes", len(p.Bytes))
		}
	}
}
