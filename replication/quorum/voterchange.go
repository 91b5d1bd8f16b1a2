package quorum

import (
	"errors"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The RPCs that change a dynamic quorum's voter set (KIP-853), served by
// every controller as Kafka's ControllerApis serves them whatever the
// kraft.version: a static quorum answers UNSUPPORTED_VERSION.
var (
	addRaftVoterAPI    = wire.APIRange{Key: kmsg.AddRaftVoter.Int16(), MinVersion: 0, MaxVersion: 1}
	removeRaftVoterAPI = wire.APIRange{Key: kmsg.RemoveRaftVoter.Int16(), MinVersion: 0, MaxVersion: 0}
)

// supportedKRaftVersions is the kraft.version range every kraftlab node
// supports. Kafka's leader asks the new voter's ApiVersions for it; every
// replica of a playground runs this code, so the leader knows it.
const (
	minKRaftVersion = raft.KRaftVersion0
	maxKRaftVersion = raft.KRaftVersion1
)

// voterWait is a voter change the leader appended and answers once its
// VotersRecord commits, its leadership ends or the request's timeout
// passes, as Kafka's AddVoterHandler and RemoveVoterHandler complete
// their futures.
type voterWait struct {
	req      *wire.Request
	epoch    int32
	offset   int64
	deadline time.Time
}

// changeVoters handles AddRaftVoter and RemoveRaftVoter on the node's loop.
func (in *instance) changeVoters(now time.Time, req *wire.Request) {
	st := in.raft.Status()
	timeout := in.cfg.Raft.RequestTimeout
	var (
		off    int64
		err    error
		ack    = true
		wantID *string
	)
	switch body := req.Body.(type) {
	case *kmsg.AddRaftVoterRequest:
		wantID = body.ClusterID
		if body.TimeoutMillis > 0 {
			timeout = time.Duration(body.TimeoutMillis) * time.Millisecond
		}
		ack = body.Version < 1 || body.AckWhenCommitted
		v := raft.Voter{ID: body.VoterID, DirectoryID: raft.DirectoryID(body.VoterDirectoryID), MinVersion: minKRaftVersion, MaxVersion: maxKRaftVersion}
		for _, l := range body.Listeners {
			v.Endpoints = append(v.Endpoints, raft.Endpoint{Name: l.Name, Host: l.Host, Port: l.Port})
		}
		if wantID == nil || *wantID == in.cfg.Raft.ClusterID {
			off, err = in.raft.AddVoter(now, st.Epoch, v)
		}
	case *kmsg.RemoveRaftVoterRequest:
		wantID = body.ClusterID
		if wantID == nil || *wantID == in.cfg.Raft.ClusterID {
			off, err = in.raft.RemoveVoter(now, st.Epoch, body.VoterID, raft.DirectoryID(body.VoterDirectoryID))
		}
	case *kmsg.UpdateFeaturesRequest:
		in.updateFeatures(now, req)
		return
	default:
		return
	}
	switch {
	case wantID != nil && *wantID != in.cfg.Raft.ClusterID:
		respondVoterChange(req, kerr.InconsistentClusterID, "")
	case err != nil:
		respondVoterChange(req, voterChangeError(err), err.Error())
	case !ack:
		respondVoterChange(req, nil, "")
	default:
		in.voterWaits = append(in.voterWaits, voterWait{req: req, epoch: st.Epoch, offset: off, deadline: now.Add(timeout)})
	}
}

// answerVoterWaits answers the voter changes whose outcome is known.
func (in *instance) answerVoterWaits(now time.Time) {
	if len(in.voterWaits) == 0 {
		return
	}
	st := in.raft.Status()
	_, pending := in.raft.VoterChange()
	kept := in.voterWaits[:0]
	for _, w := range in.voterWaits {
		switch {
		case st.AppliedOffset > w.offset:
			// Committed: handed to the listener. A leader that removed
			// itself resigns as soon as its removal commits, so this is
			// asked before its role.
			respondVoterChange(w.req, nil, "")
		case st.Role != raft.Leader || st.Epoch != w.epoch:
			respondVoterChange(w.req, kerr.NotLeaderForPartition, "the leader changed before the new voter set committed")
		case !pending || st.HighWatermark > w.offset:
			respondVoterChange(w.req, nil, "")
		case !now.Before(w.deadline):
			respondVoterChange(w.req, kerr.RequestTimedOut, "the new voter set did not commit in time")
		default:
			kept = append(kept, w)
		}
	}
	clear(in.voterWaits[len(kept):])
	in.voterWaits = kept
}

// voterWaitDeadline is the earliest deadline of the waiting voter
// changes, zero if none waits.
func (in *instance) voterWaitDeadline() time.Time {
	var d time.Time
	for _, w := range in.voterWaits {
		if d.IsZero() || w.deadline.Before(d) {
			d = w.deadline
		}
	}
	return d
}

// voterChangeError maps raft's refusals onto the codes Kafka answers with.
func voterChangeError(err error) *kerr.Error {
	switch {
	case errors.Is(err, raft.ErrNotLeader):
		return kerr.NotLeaderForPartition
	case errors.Is(err, raft.ErrStaticQuorum):
		return kerr.UnsupportedVersion
	case errors.Is(err, raft.ErrDuplicateVoter):
		return kerr.DuplicateVoter
	case errors.Is(err, raft.ErrVoterNotFound):
		return kerr.VoterNotFound
	case errors.Is(err, raft.ErrUnsupportedKRaftVersion):
		return kerr.InvalidRequest
	case errors.Is(err, raft.ErrLeaderNotReady), errors.Is(err, raft.ErrVoterChangePending), errors.Is(err, raft.ErrNotCaughtUp):
		return kerr.RequestTimedOut
	}
	return kerr.UnknownServerError
}

// respondVoterChange answers an AddRaftVoter or RemoveRaftVoter request.
func respondVoterChange(req *wire.Request, code *kerr.Error, msg string) {
	var ec int16
	var m *string
	if code != nil {
		ec = code.Code
		if msg == "" {
			msg = code.Message
		}
		m = &msg
	}
	switch body := req.Body.(type) {
	case *kmsg.AddRaftVoterRequest:
		resp := kmsg.NewPtrAddRaftVoterResponse()
		resp.ErrorCode, resp.ErrorMessage = ec, m
		req.Respond(resp)
	case *kmsg.RemoveRaftVoterRequest:
		resp := kmsg.NewPtrRemoveRaftVoterResponse()
		resp.ErrorCode, resp.ErrorMessage = ec, m
		req.Respond(resp)
	case *kmsg.UpdateFeaturesRequest:
		respondUpdateFeatures(req, body, code, m)
	}
}

// isVoterChange reports whether req is AddRaftVoter, RemoveRaftVoter or
// UpdateFeatures (a kraft.version upgrade), which the loop handles itself
// rather than raft's Step.
func isVoterChange(req *wire.Request) bool {
	switch req.Body.(type) {
	case *kmsg.AddRaftVoterRequest, *kmsg.RemoveRaftVoterRequest, *kmsg.UpdateFeaturesRequest:
		return true
	}
	return false
}
