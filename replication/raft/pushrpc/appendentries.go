package pushrpc

import (
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AppendEntriesRequest is the leader's push (Raft's AppendEntries RPC):
// the records from BaseOffset on, or none as a heartbeat, with the
// leader's high watermark. The replica accepts them only if its log holds
// the leader's record before BaseOffset, whose epoch is PrevEpoch: Raft's
// prevLogIndex+1 and prevLogTerm, a Fetch's FetchOffset and
// LastFetchedEpoch seen from the leader's side.
type AppendEntriesRequest struct {
	version
	// ClusterID is checked as on Kafka's quorum RPCs; nil skips the check.
	ClusterID *string
	// LeaderID and LeaderEpoch name the sender and its epoch (Raft's term).
	LeaderID    int32
	LeaderEpoch int32
	// BaseOffset is where Records start; PrevEpoch the epoch of the record
	// before it (0 when BaseOffset is 0).
	BaseOffset int64
	PrevEpoch  int32
	// HighWatermark is the leader's (Raft's leaderCommit), -1 while unknown.
	HighWatermark int64
	// Records are whole Kafka v2 record batches, nil for a heartbeat.
	Records []byte
}

// Key implements kmsg.Request.
func (*AppendEntriesRequest) Key() int16 { return AppendEntriesKey }

// ResponseKind implements kmsg.Request.
func (r *AppendEntriesRequest) ResponseKind() kmsg.Response {
	return &AppendEntriesResponse{version: r.version}
}

// AppendTo implements kmsg.Request.
func (r *AppendEntriesRequest) AppendTo(dst []byte) []byte {
	dst = kbin.AppendCompactNullableString(dst, r.ClusterID)
	dst = kbin.AppendInt32(dst, r.LeaderID)
	dst = kbin.AppendInt32(dst, r.LeaderEpoch)
	dst = kbin.AppendInt64(dst, r.BaseOffset)
	dst = kbin.AppendInt32(dst, r.PrevEpoch)
	dst = kbin.AppendInt64(dst, r.HighWatermark)
	dst = kbin.AppendCompactNullableBytes(dst, r.Records)
	return appendTags(dst)
}

// ReadFrom implements kmsg.Request. Records alias src.
func (r *AppendEntriesRequest) ReadFrom(src []byte) error {
	b, err := begin("AppendEntries request", r.v, src)
	if err != nil {
		return err
	}
	r.ClusterID = b.CompactNullableString()
	r.LeaderID = b.Int32()
	r.LeaderEpoch = b.Int32()
	r.BaseOffset = b.Int64()
	r.PrevEpoch = b.Int32()
	r.HighWatermark = b.Int64()
	r.Records = b.bytes()
	return b.end()
}

// AppendEntriesResponse answers an AppendEntries. A replica that accepts
// it says how far its log now matches the leader's, once that is durable
// (Raft's success and match index); one whose log does not hold the
// leader's record before BaseOffset refuses it with a hint of where it
// may match (etcd's reject hint).
type AppendEntriesResponse struct {
	version
	// ErrorCode is a Kafka error code: INCONSISTENT_CLUSTER_ID,
	// INVALID_REQUEST, FENCED_LEADER_EPOCH (the sender's epoch is old) or
	// NOT_LEADER_OR_FOLLOWER; NONE whether or not it accepted.
	ErrorCode int16
	// LeaderID and LeaderEpoch are the leader and epoch the replica knows.
	LeaderID    int32
	LeaderEpoch int32
	// Success: the replica's log matches the leader's up to MatchOffset
	// (the request's BaseOffset plus its records) and holds it durably.
	Success     bool
	MatchOffset int64
	// DivergingEpoch, on a refusal, is the replica's best guess of where
	// the logs may match: its record before EndOffset has epoch Epoch, at
	// most the request's PrevEpoch, and EndOffset is at most BaseOffset.
	// The leader's next probe starts there or before (-1, -1 otherwise).
	DivergingEpoch EpochEndOffset
	// LogEndOffset is the replica's log end offset.
	LogEndOffset int64
}

// EpochEndOffset is an epoch and the offset where it ends, as Kafka's
// Fetch DivergingEpoch.
type EpochEndOffset struct {
	Epoch     int32
	EndOffset int64
}

// Key implements kmsg.Response.
func (*AppendEntriesResponse) Key() int16 { return AppendEntriesKey }

// RequestKind implements kmsg.Response.
func (r *AppendEntriesResponse) RequestKind() kmsg.Request {
	return &AppendEntriesRequest{version: r.version}
}

// AppendTo implements kmsg.Response.
func (r *AppendEntriesResponse) AppendTo(dst []byte) []byte {
	dst = kbin.AppendInt16(dst, r.ErrorCode)
	dst = kbin.AppendInt32(dst, r.LeaderID)
	dst = kbin.AppendInt32(dst, r.LeaderEpoch)
	dst = kbin.AppendBool(dst, r.Success)
	dst = kbin.AppendInt64(dst, r.MatchOffset)
	dst = kbin.AppendInt32(dst, r.DivergingEpoch.Epoch)
	dst = kbin.AppendInt64(dst, r.DivergingEpoch.EndOffset)
	dst = kbin.AppendInt64(dst, r.LogEndOffset)
	return appendTags(dst)
}

// ReadFrom implements kmsg.Response.
func (r *AppendEntriesResponse) ReadFrom(src []byte) error {
	b, err := begin("AppendEntries response", r.v, src)
	if err != nil {
		return err
	}
	r.ErrorCode = b.Int16()
	r.LeaderID = b.Int32()
	r.LeaderEpoch = b.Int32()
	r.Success = b.Bool()
	r.MatchOffset = b.Int64()
	r.DivergingEpoch.Epoch = b.Int32()
	r.DivergingEpoch.EndOffset = b.Int64()
	r.LogEndOffset = b.Int64()
	return b.end()
}
