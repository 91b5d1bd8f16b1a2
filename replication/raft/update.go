package raft

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// UpdateRaftVoter (KIP-853): a voter tells the leader its listeners and
// the kraft.version range it supports, so that the voter set names them.
// Kafka's follower sends it when the voter set's entry for it differs
// from what it is (a restart on other listeners, a voter set written at
// format time without them), once per fetch timeout until the entry
// agrees; the leader, with AddVoter's and RemoveVoter's rules on one
// change at a time, appends the updated VotersRecord and answers at once,
// without waiting for the record to commit. A leader whose own entry
// differs writes its update itself. Under kraft.version 0 each voter
// sends it once to every new leader, which keeps the entry in memory for
// a kraft.version upgrade (upgrade.go).

// The kraft.version range this code supports: every kraftlab node runs
// it, so the range a voter sends and the range AddVoter is given agree.
const (
	minSupportedKRaftVersion = KRaftVersion0
	maxSupportedKRaftVersion = KRaftVersion1
)

// SetListeners gives the node its own listeners, the first its default,
// as it describes itself in the voter set (Kafka's listeners with
// controller.listener.names). A driver that learns its listener only once
// it is bound calls it then; Config.Listeners gives them up front.
func (n *Node) SetListeners(now time.Time, listeners []Endpoint) error {
	if err := n.enter(now); err != nil {
		return err
	}
	defer n.exit()
	n.cfg.Listeners = slices.Clone(listeners)
	if err := n.poll(now); err != nil {
		return fmt.Errorf("raft node %d: set listeners: %w", n.id, err)
	}
	return nil
}

// localVoter is this node as a voter set entry (Kafka's
// localVoterNodeOrThrow); ok is false while it cannot describe itself (no
// listeners, or no directory id, which UpdateRaftVoter requires).
func (n *Node) localVoter() (Voter, bool) {
	if len(n.cfg.Listeners) == 0 || n.cfg.DirectoryID.IsZero() {
		return Voter{}, false
	}
	return Voter{ID: n.id, DirectoryID: n.cfg.DirectoryID, Endpoints: slices.Clone(n.cfg.Listeners),
		MinVersion: minSupportedKRaftVersion, MaxVersion: maxSupportedKRaftVersion}, true
}

// needsUpdate reports whether this node is a voter of a dynamic quorum
// whose entry in the voter set in force differs from what it is (Kafka's
// voterNodeNeedsUpdate), and returns what it is.
func (n *Node) needsUpdate() (Voter, bool) {
	if n.cfg.Replication == Push || n.history.kraftVersion() < KRaftVersion1 {
		return Voter{}, false
	}
	local, ok := n.localVoter()
	if !ok {
		return Voter{}, false
	}
	v, ok := n.history.last().Voter(n.id)
	return local, ok && v.matches(local.ID, local.DirectoryID) && !v.equal(local)
}

// listenerName is the name of this node's default listener, the one every
// voter must have one on; "" when the node knows none of its own.
func (n *Node) listenerName() string {
	if len(n.cfg.Listeners) == 0 {
		return ""
	}
	return n.cfg.Listeners[0].Name
}

// pollUpdateVoter is a voter follower's turn to send UpdateRaftVoter
// (pollFollowerAsVoter): once per fetch timeout it checks its entry, and
// sends the request to the leader when the entry differs and the
// connection is free. sent is true when it used the poll for that, and
// wake is when to look again.
func (n *Node) pollUpdateVoter(now time.Time) (wake time.Time, sent bool) {
	if _, ok := n.localVoter(); !ok || n.cfg.Replication == Push {
		return time.Time{}, false
	}
	static := n.history.kraftVersion() < KRaftVersion1
	if static && n.updatedLeader {
		return time.Time{}, false
	}
	if now.Before(n.updateVoterDeadline) {
		return n.updateVoterDeadline, false
	}
	// A static quorum's leader keeps voters' entries in memory only, for
	// a kraft.version upgrade: each voter describes itself to every new
	// leader once (shouldSendUpdateVoteRequest).
	if _, ok := n.needsUpdate(); !ok && !static {
		n.updateVoterDeadline = now.Add(n.cfg.FetchTimeout)
		return n.updateVoterDeadline, false
	}
	if ok, wait := n.ready(now, n.leader); !ok {
		// A Fetch is in flight (parked at the leader) or the connection
		// backs off: send once it is free.
		return wait, true
	}
	n.updateVoterDeadline = now.Add(n.cfg.FetchTimeout)
	return earliest(n.updateVoterDeadline, n.trySend(now, n.leader, n.updateVoterRequest)), true
}

func (n *Node) updateVoterRequest() kmsg.Request {
	local, _ := n.localVoter()
	req := kmsg.NewPtrUpdateRaftVoterRequest()
	req.Version = UpdateRaftVoterVersion
	req.ClusterID = &n.cfg.ClusterID
	req.CurrentLeaderEpoch = n.epoch
	req.VoterID, req.VoterDirectoryID = local.ID, local.DirectoryID
	for _, e := range local.Endpoints {
		l := kmsg.NewUpdateRaftVoterRequestListener()
		l.Name, l.Host, l.Port = e.Name, e.Host, e.Port
		req.Listeners = append(req.Listeners, l)
	}
	req.KRaftVersionFeature.MinSupportedVersion = int16(local.MinVersion)
	req.KRaftVersionFeature.MaxSupportedVersion = int16(local.MaxVersion)
	return req
}

// handleUpdateRaftVoterResponse takes the leader's answer: news of
// another leader or epoch as any response brings; success counts as a
// fetch for the fetch timeout, as Kafka's follower counts it. A refusal
// (another change pending, say) is retried a fetch timeout later.
func (n *Node) handleUpdateRaftVoterResponse(now time.Time, m Message, resp *kmsg.UpdateRaftVoterResponse) (bool, error) {
	l := resp.CurrentLeader
	if handled, ok, err := n.handleCommonResponse(now, resp.ErrorCode, l.LeaderID, l.LeaderEpoch); handled || err != nil {
		return ok, err
	}
	switch resp.ErrorCode {
	case errNone, errUnsupportedVersion:
		if n.role == Follower && m.From == n.leader {
			n.fetchDeadline = now.Add(n.cfg.FetchTimeout)
			n.updatedLeader = true
		}
		return true, nil
	}
	n.logger.Info("update voter refused", "from", m.From, "error", ErrorName(resp.ErrorCode))
	return false, nil
}

// handleUpdateRaftVoterRequest is the leader's side (KafkaRaftClient's
// handleUpdateVoterRequest with UpdateVoterHandler), with Kafka's checks
// in Kafka's order and its error codes.
func (n *Node) handleUpdateRaftVoterRequest(now time.Time, m Message, req *kmsg.UpdateRaftVoterRequest) error {
	resp := kmsg.NewPtrUpdateRaftVoterResponse()
	resp.Version = req.Version
	code, err := n.updateVoterCode(now, req)
	resp.ErrorCode = code
	resp.CurrentLeader.LeaderID, resp.CurrentLeader.LeaderEpoch = n.leader, n.epoch
	if v, ok := n.history.last().Voter(n.leader); ok && n.leader >= 0 {
		if e, ok := endpointNamed(v.Endpoints, n.listenerName()); ok {
			resp.CurrentLeader.Host, resp.CurrentLeader.Port = e.Host, int32(e.Port)
		}
	}
	if n.role == Leader {
		if e, ok := endpointNamed(n.cfg.Listeners, n.listenerName()); ok {
			resp.CurrentLeader.Host, resp.CurrentLeader.Port = e.Host, int32(e.Port)
		}
	}
	n.reply(m, resp)
	return err
}

func (n *Node) updateVoterCode(now time.Time, req *kmsg.UpdateRaftVoterRequest) (int16, error) {
	if !n.validClusterID(req.ClusterID) {
		return errInconsistentClusterID, nil
	}
	if code := n.validateLeaderOnly(req.CurrentLeaderEpoch); code != errNone {
		return code, nil
	}
	if n.shuttingDown {
		return errBrokerNotAvailable, nil
	}
	v := Voter{ID: req.VoterID, DirectoryID: DirectoryID(req.VoterDirectoryID),
		MinVersion: KRaftVersion(req.KRaftVersionFeature.MinSupportedVersion), MaxVersion: KRaftVersion(req.KRaftVersionFeature.MaxSupportedVersion)}
	for _, l := range req.Listeners {
		v.Endpoints = append(v.Endpoints, Endpoint{Name: l.Name, Host: l.Host, Port: l.Port})
	}
	_, hasDefault := endpointNamed(v.Endpoints, n.listenerName())
	switch {
	case v.ID < 0 || v.DirectoryID.IsZero():
		return errInvalidRequest, nil
	case !hasDefault:
		return errInvalidRequest, nil
	case v.MinVersion < 0 || v.MaxVersion < 0 || v.MaxVersion < v.MinVersion:
		return errInvalidRequest, nil
	}
	_, err := n.updateVoter(now, v)
	switch {
	case err == nil:
		// Kafka counts the request as the voter following the leader.
		n.lead.followingVoter(n, v.ID, now)
		return errNone, nil
	case errors.Is(err, ErrLeaderNotReady), errors.Is(err, ErrVoterChangePending):
		return errRequestTimedOut, nil
	case errors.Is(err, ErrUnsupportedKRaftVersion):
		return errInvalidRequest, nil
	case errors.Is(err, ErrVoterNotFound):
		return errVoterNotFound, nil
	case errors.Is(err, ErrStaticQuorum):
		return errUnsupportedVersion, nil
	}
	// The log could not take the record: the node stops on it.
	return errUnknownServerError, fmt.Errorf("update voter %d: %w", v.ID, err)
}

// endpointNamed finds the listener called name; any first listener when
// name is "" (a node that does not know its own listeners cannot check).
func endpointNamed(eps []Endpoint, name string) (Endpoint, bool) {
	for _, e := range eps {
		if name == "" || e.Name == name {
			return e, true
		}
	}
	return Endpoint{}, false
}

// UpdateVoter makes the leader of epoch replace the entry of voter v.ID
// with v (its listeners and kraft.version range), with Kafka's rules
// (UpdateVoterHandler): the leader has committed in its epoch, no voter
// change is uncommitted, v supports the finalized kraft.version, and the
// voter set has v's id with v's directory id. It returns the offset of the
// VotersRecord appended, in force at once; under kraft.version 0, whose
// voter set is not in the log, it checks the same, keeps the entry in
// memory for a kraft.version upgrade (UpgradeKRaftVersion), as Kafka's
// leader does, and returns -1. The UpdateRaftVoter RPC reaches it through
// Step; this entry point is for tests and tools.
func (n *Node) UpdateVoter(now time.Time, epoch int32, v Voter) (int64, error) {
	if err := n.enter(now); err != nil {
		return 0, err
	}
	defer n.exit()
	if n.role != Leader || n.epoch != epoch || n.lead.resignRequested || n.shuttingDown {
		return 0, fmt.Errorf("raft node %d: update voter %d: %w (node %d is %v in epoch %d)", n.id, v.ID, ErrNotLeader, n.id, n.role, n.epoch)
	}
	off, err := n.updateVoter(now, v)
	if err != nil {
		return 0, fmt.Errorf("raft node %d: update voter %d: %w", n.id, v.ID, err)
	}
	if err := n.poll(now); err != nil {
		return 0, fmt.Errorf("raft node %d: update voter %d: %w", n.id, v.ID, err)
	}
	return off, nil
}

// updateVoter is UpdateVoter on a leader.
func (n *Node) updateVoter(now time.Time, v Voter) (int64, error) {
	ls := n.lead
	kv := n.history.kraftVersion()
	switch {
	case n.cfg.Replication == Push:
		return 0, fmt.Errorf("%w: voter changes need pull replication", ErrStaticQuorum)
	case n.history.lastOffset() >= 0 && n.history.lastOffset() >= ls.hwm:
		return 0, fmt.Errorf("%w: VotersRecord at %d, high watermark %d", ErrVoterChangePending, n.history.lastOffset(), ls.hwm)
	case ls.hwm < 0:
		return 0, ErrLeaderNotReady
	case kv < v.MinVersion || kv > v.MaxVersion:
		return 0, fmt.Errorf("%w: it supports %d to %d, the log has %d", ErrUnsupportedKRaftVersion, v.MinVersion, v.MaxVersion, kv)
	}
	set := n.history.last()
	old, ok := set.Voter(v.ID)
	if kv < KRaftVersion1 {
		// Kafka matches by id alone here: a static voter set has no
		// directory ids. The entry is kept in memory, for an upgrade.
		if !ok {
			return 0, fmt.Errorf("%w: voters %v", ErrVoterNotFound, set)
		}
		ls.learn(v)
		return -1, nil
	}
	if !ok || !old.matches(v.ID, v.DirectoryID) {
		return 0, fmt.Errorf("%w: voters %v", ErrVoterNotFound, set)
	}
	return n.appendVoters(now, set.without(v.ID).with(v))
}

// maybeUpdateSelf is the leader's own update: when its entry differs from
// what it is, it writes the updated set as soon as it may change voters.
// Kafka's leader writes it with the LeaderChange record that opens its
// epoch; kraftlab's waits for that record to commit (one change at a
// time, as for any other), and also covers listeners learned later.
func (n *Node) maybeUpdateSelf(now time.Time) error {
	local, ok := n.needsUpdate()
	if !ok || !n.voter || n.canChangeVoters(n.epoch) != nil {
		return nil
	}
	if _, err := n.appendVoters(now, n.history.last().without(n.id).with(local)); err != nil {
		return fmt.Errorf("update own voter entry: %w", err)
	}
	return nil
}
