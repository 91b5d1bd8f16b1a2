package pushrpc

import (
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// InstallSnapshotRequest pushes one chunk of the leader's snapshot to a
// replica whose log lacks records the leader's log no longer holds (Raft's
// InstallSnapshot RPC; a FetchSnapshot response sent unasked).
type InstallSnapshotRequest struct {
	version
	ClusterID   *string
	LeaderID    int32
	LeaderEpoch int32
	// SnapshotID names the snapshot: the offset after its last record and
	// that record's epoch.
	SnapshotID EpochEndOffset
	// Size is the snapshot's length in bytes; Bytes its chunk at Position.
	Size     int64
	Position int64
	Bytes    []byte
}

// Key implements kmsg.Request.
func (*InstallSnapshotRequest) Key() int16 { return InstallSnapshotKey }

// ResponseKind implements kmsg.Request.
func (r *InstallSnapshotRequest) ResponseKind() kmsg.Response {
	return &InstallSnapshotResponse{version: r.version}
}

// AppendTo implements kmsg.Request.
func (r *InstallSnapshotRequest) AppendTo(dst []byte) []byte {
	dst = kbin.AppendCompactNullableString(dst, r.ClusterID)
	dst = kbin.AppendInt32(dst, r.LeaderID)
	dst = kbin.AppendInt32(dst, r.LeaderEpoch)
	dst = kbin.AppendInt64(dst, r.SnapshotID.EndOffset)
	dst = kbin.AppendInt32(dst, r.SnapshotID.Epoch)
	dst = kbin.AppendInt64(dst, r.Size)
	dst = kbin.AppendInt64(dst, r.Position)
	dst = kbin.AppendCompactBytes(dst, r.Bytes)
	return appendTags(dst)
}

// ReadFrom implements kmsg.Request. Bytes alias src.
func (r *InstallSnapshotRequest) ReadFrom(src []byte) error {
	b, err := begin("InstallSnapshot request", r.v, src)
	if err != nil {
		return err
	}
	r.ClusterID = b.CompactNullableString()
	r.LeaderID = b.Int32()
	r.LeaderEpoch = b.Int32()
	r.SnapshotID.EndOffset = b.Int64()
	r.SnapshotID.Epoch = b.Int32()
	r.Size = b.Int64()
	r.Position = b.Int64()
	r.Bytes = b.CompactBytes()
	return b.end()
}

// InstallSnapshotResponse answers an InstallSnapshot with how much of the
// snapshot the replica holds: the position of the next chunk it wants, the
// snapshot's size once it has installed it.
type InstallSnapshotResponse struct {
	version
	ErrorCode   int16
	LeaderID    int32
	LeaderEpoch int32
	Position    int64
}

// Key implements kmsg.Response.
func (*InstallSnapshotResponse) Key() int16 { return InstallSnapshotKey }

// RequestKind implements kmsg.Response.
func (r *InstallSnapshotResponse) RequestKind() kmsg.Request {
	return &InstallSnapshotRequest{version: r.version}
}

// AppendTo implements kmsg.Response.
func (r *InstallSnapshotResponse) AppendTo(dst []byte) []byte {
	dst = kbin.AppendInt16(dst, r.ErrorCode)
	dst = kbin.AppendInt32(dst, r.LeaderID)
	dst = kbin.AppendInt32(dst, r.LeaderEpoch)
	dst = kbin.AppendInt64(dst, r.Position)
	return appendTags(dst)
}

// ReadFrom implements kmsg.Response.
func (r *InstallSnapshotResponse) ReadFrom(src []byte) error {
	b, err := begin("InstallSnapshot response", r.v, src)
	if err != nil {
		return err
	}
	r.ErrorCode = b.Int16()
	r.LeaderID = b.Int32()
	r.LeaderEpoch = b.Int32()
	r.Position = b.Int64()
	return b.end()
}
