package group

import "github.com/twmb/franz-go/pkg/kerr"

// appendError is the error a client gets for an append to the offsets
// topic that failed with code (Kafka's CoordinatorRuntime and
// OffsetMetadataManager translations): the partition's trouble becomes
// the coordinator's, so that the client finds the coordinator again or
// retries; an offset commit too large for a batch is
// INVALID_COMMIT_OFFSET_SIZE.
func appendError(code int16, commit bool) int16 {
	switch code {
	case 0:
		return 0
	case kerr.UnknownTopicOrPartition.Code, kerr.NotEnoughReplicas.Code, kerr.NotEnoughReplicasAfterAppend.Code, kerr.RequestTimedOut.Code:
		return kerr.CoordinatorNotAvailable.Code
	case kerr.NotLeaderForPartition.Code, kerr.KafkaStorageError.Code, kerr.FencedLeaderEpoch.Code:
		return kerr.NotCoordinator.Code
	case kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code, kerr.InvalidFetchSize.Code:
		if commit {
			return kerr.InvalidCommitOffsetSize.Code
		}
		return kerr.UnknownServerError.Code
	}
	return kerr.UnknownServerError.Code
}
