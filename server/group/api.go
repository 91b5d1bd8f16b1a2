package group

import (
	"crypto/rand"
	"fmt"
	"net"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The versions of the group APIs Kafka 4.4 serves for classic groups,
// cut where kraftlab stops: OffsetCommit v10 and OffsetFetch v10 name
// topics by id (KIP-848), which this coordinator does not take.
var (
	joinGroupVersions      = wire.APIRange{Key: kmsg.JoinGroup.Int16(), MinVersion: 0, MaxVersion: 9}
	syncGroupVersions      = wire.APIRange{Key: kmsg.SyncGroup.Int16(), MinVersion: 0, MaxVersion: 5}
	heartbeatVersions      = wire.APIRange{Key: kmsg.Heartbeat.Int16(), MinVersion: 0, MaxVersion: 4}
	leaveGroupVersions     = wire.APIRange{Key: kmsg.LeaveGroup.Int16(), MinVersion: 0, MaxVersion: 5}
	offsetCommitVersions   = wire.APIRange{Key: kmsg.OffsetCommit.Int16(), MinVersion: 2, MaxVersion: 9}
	offsetFetchVersions    = wire.APIRange{Key: kmsg.OffsetFetch.Int16(), MinVersion: 1, MaxVersion: 9}
	listGroupsVersions     = wire.APIRange{Key: kmsg.ListGroups.Int16(), MinVersion: 0, MaxVersion: 5}
	describeGroupsVersions = wire.APIRange{Key: kmsg.DescribeGroups.Int16(), MinVersion: 0, MaxVersion: 6}
	deleteGroupsVersions   = wire.APIRange{Key: kmsg.DeleteGroups.Int16(), MinVersion: 0, MaxVersion: 3}
	offsetDeleteVersions   = wire.APIRange{Key: kmsg.OffsetDelete.Int16(), MinVersion: 0, MaxVersion: 0}
)

// Register serves the group APIs on mux.
func (c *Coordinator) Register(mux *wire.Mux) error {
	for _, h := range []struct {
		api wire.APIRange
		f   func(*wire.Request)
	}{
		{joinGroupVersions, c.handleJoinGroup},
		{syncGroupVersions, c.handleSyncGroup},
		{heartbeatVersions, c.handleHeartbeat},
		{leaveGroupVersions, c.handleLeaveGroup},
		{offsetCommitVersions, c.handleOffsetCommit},
		{offsetFetchVersions, c.handleOffsetFetch},
		{listGroupsVersions, c.handleListGroups},
		{describeGroupsVersions, c.handleDescribeGroups},
		{deleteGroupsVersions, c.handleDeleteGroups},
		{offsetDeleteVersions, c.handleOffsetDelete},
		{consumerGroupHeartbeatVersions, c.handleConsumerGroupHeartbeat},
		{consumerGroupDescribeVersions, c.handleConsumerGroupDescribe},
	} {
		if err := mux.Handle(h.api, wire.HandlerFunc(h.f)); err != nil {
			return fmt.Errorf("group coordinator: %w", err)
		}
	}
	return nil
}

// clientHost is the client's address as Kafka records it
// (InetAddress.toString: "/127.0.0.1").
func clientHost(addr net.Addr) string {
	if addr == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		host = addr.String()
	}
	return "/" + host
}

// newMemberID is a new member's id, as Kafka makes them
// (ClassicGroup.generateMemberId): a static member's instance id, or a
// dynamic member's client id, and a random UUID.
func newMemberID(clientID string, instanceID *string) string {
	prefix := clientID
	if instanceID != nil {
		prefix = *instanceID
	}
	return prefix + "-" + newUUID()
}

// newUUID is a random UUID in its canonical form.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
