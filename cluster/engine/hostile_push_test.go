package engine_test

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
)

// Under push replication every node serves the push RPCs, under private
// API keys: a stranger's AppendEntries, InstallSnapshot and ObserveQuorum
// are refused as members-only before raft sees them, whatever they claim
// (an epoch that cannot be incremented, a snapshot of 2^62 bytes), and a
// body that does not decode closes only its connection.
func TestHostilePushRPCs(t *testing.T) {
	ht := openHostile(t, "kraftlab.quorum.replication=push")
	cluster := "anything"
	forged := []kmsg.Request{
		&pushrpc.AppendEntriesRequest{ClusterID: &cluster, LeaderID: 1, LeaderEpoch: math.MaxInt32, BaseOffset: 1 << 62, PrevEpoch: math.MaxInt32, HighWatermark: 1 << 62, Records: incompressible(64 << 10)},
		&pushrpc.InstallSnapshotRequest{LeaderID: 2, LeaderEpoch: 1 << 30, SnapshotID: pushrpc.EpochEndOffset{Epoch: 1, EndOffset: 1 << 62}, Size: 1 << 62, Bytes: incompressible(4 << 10)},
		&pushrpc.ObserveQuorumRequest{ReplicaID: 9999, LogEndOffset: 1 << 62, LastEpoch: math.MaxInt32},
	}
	for _, addr := range append(append([]string(nil), ht.controllers...), ht.brokers...) {
		for _, req := range forged {
			h := dialHostile(t, addr)
			if _, err := h.send(req, "hostile"); err != nil {
				t.Fatalf("%s: send %s: %v", addr, pushrpc.NameForKey(req.Key()), err)
			}
			resp, err := h.recv(req, 10*time.Second)
			if req.Key() == pushrpc.ObserveQuorumKey && err != nil && h.closedWithin(time.Second) {
				// Brokers do not serve ObserveQuorum: the connection closes.
				continue
			}
			if err != nil {
				t.Fatalf("%s: %s: %v", addr, pushrpc.NameForKey(req.Key()), err)
			}
			if code := errorCode(resp); code != kerr.ClusterAuthorizationFailed.Code {
				t.Errorf("%s: stranger's %s answered with error %d", addr, pushrpc.NameForKey(req.Key()), code)
			}
			h.Close()
		}
		// A body cut short: the connection closes.
		h := dialHostile(t, addr)
		f := h.frame(forged[0], "hostile")
		f = f[:len(f)-10]
		binary.BigEndian.PutUint32(f, uint32(len(f)-4))
		if _, err := h.Write(f); err != nil {
			t.Fatal(err)
		}
		if !h.closedWithin(10 * time.Second) {
			t.Errorf("%s: a cut AppendEntries left the connection open", addr)
		}
	}
	ht.checkServing(t, "after forged pushes")
}

func errorCode(resp kmsg.Response) int16 {
	switch r := resp.(type) {
	case *pushrpc.AppendEntriesResponse:
		return r.ErrorCode
	case *pushrpc.InstallSnapshotResponse:
		return r.ErrorCode
	case *pushrpc.ObserveQuorumResponse:
		return r.ErrorCode
	}
	return -2
}
