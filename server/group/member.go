package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Protocol is one protocol a member supports (an assignor, for
// consumers) with its metadata (the subscription).
type Protocol struct {
	Name     string
	Metadata []byte
}

// member is one member of a classic group (Kafka's ClassicGroupMember).
type member struct {
	id                string
	instanceID        *string
	clientID, host    string
	sessionTimeout    time.Duration
	rebalanceTimeout  time.Duration
	protocols         []Protocol
	assignment        []byte
	heartbeatDeadline time.Time
	joinWait          func(JoinResult)
	syncWait          func(SyncResult)
}

// metadataFor is the member's metadata of protocol name.
func (m *member) metadataFor(name string) []byte {
	for _, p := range m.protocols {
		if p.Name == name {
			return p.Metadata
		}
	}
	return nil
}

// supports reports whether the member lists protocol name.
func (m *member) supports(name string) bool {
	for _, p := range m.protocols {
		if p.Name == name {
			return true
		}
	}
	return false
}

// sameProtocols reports whether ps are the member's protocols, in order
// and with the same metadata.
func (m *member) sameProtocols(ps []Protocol) bool {
	if len(ps) != len(m.protocols) {
		return false
	}
	for i, p := range ps {
		if p.Name != m.protocols[i].Name || string(p.Metadata) != string(m.protocols[i].Metadata) {
			return false
		}
	}
	return true
}

// MemberDescription is one member as DescribeGroups shows it.
type MemberDescription struct {
	MemberID, ClientID, ClientHost string
	InstanceID                     *string
	Metadata, Assignment           []byte
}

// metadataValue is the member as GroupMetadataValue stores it.
func (m *member) metadataValue(protocol string) kmsg.GroupMetadataValueMember {
	v := kmsg.NewGroupMetadataValueMember()
	v.MemberID, v.InstanceID, v.ClientID, v.ClientHost = m.id, m.instanceID, m.clientID, m.host
	v.RebalanceTimeoutMillis = int32(m.rebalanceTimeout / time.Millisecond)
	v.SessionTimeoutMillis = int32(m.sessionTimeout / time.Millisecond)
	v.Subscription, v.Assignment = m.metadataFor(protocol), m.assignment
	if v.Subscription == nil {
		v.Subscription = []byte{}
	}
	if v.Assignment == nil {
		v.Assignment = []byte{}
	}
	return v
}
