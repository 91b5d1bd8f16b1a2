package controller

import (
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// minInsyncReplicas is the topic config (and cluster default) the brokers'
// acks=all produces check.
const minInsyncReplicas = "min.insync.replicas"

// validateTopicConfig checks the value of a topic config the data plane
// acts on, as Kafka's LogConfig definitions do (an INT at least 1, a
// BOOLEAN), with ConfigDef's wording. Other keys are not modelled and pass.
func validateTopicConfig(name, value string) *apiError {
	switch name {
	case minInsyncReplicas:
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 32)
		if err != nil {
			return refuse(kerr.InvalidConfig, "Invalid value %s for configuration %s: Not a number of type INT", value, name)
		}
		if n < 1 {
			return refuse(kerr.InvalidConfig, "Invalid value %d for configuration %s: Value must be at least 1", n, name)
		}
	case uncleanLeaderElectionEnable:
		switch strings.ToLower(strings.TrimSpace(value)) {
		case "true", "false":
		default:
			return refuse(kerr.InvalidConfig, "Invalid value %s for configuration %s: Expected value to be either true or false", value, name)
		}
	}
	return nil
}
