package pushrpc

import (
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ObserveQuorumRequest is how an observer (etcd's learner) gets the log
// pushed to it: the leader knows its voters from the configuration, but
// learns of an observer only when it asks. A voter that does not lead
// answers with the leader it knows. The leader forgets an observer that
// stops answering, as Kafka's leader forgets one that stops fetching.
type ObserveQuorumRequest struct {
	version
	ClusterID *string
	// ReplicaID is the observer's node id.
	ReplicaID int32
	// LogEndOffset and LastEpoch describe the observer's log, so the
	// leader's first push can start where it may match.
	LogEndOffset int64
	LastEpoch    int32
}

// Key implements kmsg.Request.
func (*ObserveQuorumRequest) Key() int16 { return ObserveQuorumKey }

// ResponseKind implements kmsg.Request.
func (r *ObserveQuorumRequest) ResponseKind() kmsg.Response {
	return &ObserveQuorumResponse{version: r.version}
}

// AppendTo implements kmsg.Request.
func (r *ObserveQuorumRequest) AppendTo(dst []byte) []byte {
	dst = kbin.AppendCompactNullableString(dst, r.ClusterID)
	dst = kbin.AppendInt32(dst, r.ReplicaID)
	dst = kbin.AppendInt64(dst, r.LogEndOffset)
	dst = kbin.AppendInt32(dst, r.LastEpoch)
	return appendTags(dst)
}

// ReadFrom implements kmsg.Request.
func (r *ObserveQuorumRequest) ReadFrom(src []byte) error {
	b, err := begin("ObserveQuorum request", r.v, src)
	if err != nil {
		return err
	}
	r.ClusterID = b.CompactNullableString()
	r.ReplicaID = b.Int32()
	r.LogEndOffset = b.Int64()
	r.LastEpoch = b.Int32()
	return b.end()
}

// ObserveQuorumResponse answers ObserveQuorum: NONE from the leader, which
// now pushes to the observer; NOT_LEADER_OR_FOLLOWER from another voter,
// naming the leader it knows.
type ObserveQuorumResponse struct {
	version
	ErrorCode   int16
	LeaderID    int32
	LeaderEpoch int32
}

// Key implements kmsg.Response.
func (*ObserveQuorumResponse) Key() int16 { return ObserveQuorumKey }

// RequestKind implements kmsg.Response.
func (r *ObserveQuorumResponse) RequestKind() kmsg.Request {
	return &ObserveQuorumRequest{version: r.version}
}

// AppendTo implements kmsg.Response.
func (r *ObserveQuorumResponse) AppendTo(dst []byte) []byte {
	dst = kbin.AppendInt16(dst, r.ErrorCode)
	dst = kbin.AppendInt32(dst, r.LeaderID)
	dst = kbin.AppendInt32(dst, r.LeaderEpoch)
	return appendTags(dst)
}

// ReadFrom implements kmsg.Response.
func (r *ObserveQuorumResponse) ReadFrom(src []byte) error {
	b, err := begin("ObserveQuorum response", r.v, src)
	if err != nil {
		return err
	}
	r.ErrorCode = b.Int16()
	r.LeaderID = b.Int32()
	r.LeaderEpoch = b.Int32()
	return b.end()
}
