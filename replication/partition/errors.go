package partition

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrorCode is the Kafka error code a response should carry for err: the
// code of the *kerr.Error it wraps, 0 for nil, and UNKNOWN_SERVER_ERROR
// for anything else (a disk failure, say).
func ErrorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}

// errNotLeaderOrFollower is error code 6, which Kafka renamed
// NOT_LEADER_OR_FOLLOWER (KIP-392) and kerr still calls
// NOT_LEADER_FOR_PARTITION.
var errNotLeaderOrFollower = kerr.NotLeaderForPartition
