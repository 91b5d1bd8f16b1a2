package group

import (
	"regexp"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A new member's id is its instance id and a UUID for a static member,
// its client id and a UUID for a dynamic one, as Kafka makes them
// (kafka-consumer-groups prints them under CONSUMER-ID).
func TestMemberIDsAsKafkaMakesThem(t *testing.T) {
	c := newTestCoordinator(newMemLog())
	defer c.Close()
	c.Elect(map[int32]int32{0: 1})
	loaded(t, c)
	const uuid = `-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`

	ch, answer := answerTo()
	j := joinReq("")
	j.Version = 5
	c.joinGroup(j, "dynamic-client", "/127.0.0.1", answer)
	jr := await(t, ch).(*kmsg.JoinGroupResponse)
	if jr.ErrorCode != kerr.MemberIDRequired.Code || !regexp.MustCompile(`^dynamic-client`+uuid).MatchString(jr.MemberID) {
		t.Errorf("dynamic member: %v, member id %q", kerr.ErrorForCode(jr.ErrorCode), jr.MemberID)
	}

	j = joinReq("")
	// Another group: the dynamic member above, pending, holds its
	// group's first rebalance back.
	j.Version, j.Group, j.InstanceID = 5, "static", kmsg.StringPtr("instance-1")
	c.joinGroup(j, "static-client", "/127.0.0.1", answer)
	jr = await(t, ch).(*kmsg.JoinGroupResponse)
	if jr.ErrorCode != 0 || !regexp.MustCompile(`^instance-1`+uuid).MatchString(jr.MemberID) {
		t.Errorf("static member: %v, member id %q", kerr.ErrorForCode(jr.ErrorCode), jr.MemberID)
	}
}
