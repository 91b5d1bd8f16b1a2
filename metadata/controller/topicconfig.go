package controller

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
)

// minInsyncReplicas is the topic config (and cluster default) the brokers'
// acks=all produces check.
const minInsyncReplicas = "min.insync.replicas"

// configType is a config's ConfigDef type.
type configType int8

// The ConfigDef types of the configs kraftlab knows.
const (
	typeInt configType = iota
	typeLong
	typeDouble
	typeBoolean
	typeString
	typeList
)

func (t configType) String() string {
	return [...]string{"INT", "LONG", "DOUBLE", "BOOLEAN", "STRING", "LIST"}[t]
}

// configDef is what a config's value must be (Kafka's ConfigDef.define
// with its validator): its type, a numeric range, or the words a STRING
// or LIST may hold.
type configDef struct {
	typ      configType
	min, max float64 // numeric bounds, inclusive
	oneOf    []string
	// orValue is one more value a number may take outside [min, max]
	// (gzip's level -1); hasOr says it is set.
	orValue float64
	hasOr   bool
}

func atLeast(t configType, n float64) configDef { return configDef{typ: t, min: n, max: math.Inf(1)} }
func between(t configType, lo, hi float64) configDef {
	return configDef{typ: t, min: lo, max: hi}
}
func anyNumber(t configType) configDef { return configDef{typ: t, min: math.Inf(-1), max: math.Inf(1)} }

// topicConfigs are Kafka 4.4's topic configs (LogConfig's definitions,
// TopicConfig's names, and the two throttled-replica lists of
// QuotaConfig) with their types and validators. CreateTopics and
// IncrementalAlterConfigs refuse any other name, as Kafka's
// LogConfig.validateNames does (INVALID_CONFIG).
var topicConfigs = map[string]configDef{
	"cleanup.policy":                          {typ: typeList, oneOf: []string{"compact", "delete"}},
	"compression.gzip.level":                  {typ: typeInt, min: 1, max: 9, orValue: -1, hasOr: true},
	"compression.lz4.level":                   between(typeInt, 1, 17),
	"compression.type":                        {typ: typeString, oneOf: []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}},
	"compression.zstd.level":                  between(typeInt, -131072, 22),
	"delete.retention.ms":                     atLeast(typeLong, 0),
	"errors.deadletterqueue.group.enable":     {typ: typeBoolean},
	"file.delete.delay.ms":                    atLeast(typeLong, 0),
	"flush.messages":                          atLeast(typeLong, 1),
	"flush.ms":                                atLeast(typeLong, 0),
	"follower.replication.throttled.replicas": {typ: typeList},
	"index.interval.bytes":                    atLeast(typeInt, 0),
	"leader.replication.throttled.replicas":   {typ: typeList},
	"local.retention.bytes":                   atLeast(typeLong, -2),
	"local.retention.ms":                      atLeast(typeLong, -2),
	"max.compaction.lag.ms":                   atLeast(typeLong, 1),
	"max.message.bytes":                       atLeast(typeInt, 0),
	"message.timestamp.after.max.ms":          atLeast(typeLong, 0),
	"message.timestamp.before.max.ms":         atLeast(typeLong, 0),
	"message.timestamp.type":                  {typ: typeString, oneOf: []string{"CreateTime", "LogAppendTime"}},
	"min.cleanable.dirty.ratio":               between(typeDouble, 0, 1),
	"min.compaction.lag.ms":                   atLeast(typeLong, 0),
	minInsyncReplicas:                         atLeast(typeInt, 1),
	"preallocate":                             {typ: typeBoolean},
	"remote.copy.lag.bytes":                   atLeast(typeLong, -1),
	"remote.copy.lag.ms":                      atLeast(typeLong, -1),
	"remote.log.copy.disable":                 {typ: typeBoolean},
	"remote.log.delete.on.disable":            {typ: typeBoolean},
	"remote.storage.enable":                   {typ: typeBoolean},
	"retention.bytes":                         anyNumber(typeLong),
	"retention.ms":                            atLeast(typeLong, -1),
	"segment.bytes":                           atLeast(typeInt, 1024*1024),
	"segment.index.bytes":                     atLeast(typeInt, 4),
	"segment.jitter.ms":                       atLeast(typeLong, 0),
	"segment.ms":                              atLeast(typeLong, 1),
	uncleanLeaderElectionEnable:               {typ: typeBoolean},
}

// brokerConfigs are the dynamic broker configs kraftlab acts on, for one
// broker or the cluster default: the replication throttle rates
// (QuotaConfig) and the cluster defaults of two topic configs. Kafka
// knows many more; kraftlab refuses what it would silently ignore.
var brokerConfigs = map[string]configDef{
	leaderThrottledRate:         atLeast(typeLong, 0),
	followerThrottledRate:       atLeast(typeLong, 0),
	minInsyncReplicas:           atLeast(typeInt, 1),
	uncleanLeaderElectionEnable: {typ: typeBoolean},
}

// Value sizes: a number, a boolean or one of a few words fits in
// maxScalarValueBytes; a list may be as long as a Kafka string
// (maxListValueBytes, 32767 bytes). Kafka bounds neither beyond the
// string.
const (
	maxScalarValueBytes = 64
	maxListValueBytes   = math.MaxInt16
)

// validateConfig checks a config of a resource of type typ: its name
// must be one Kafka 4.4 defines for the resource (for a broker, one
// kraftlab acts on) and its value of the config's type, in its range, of
// a sane size, with ConfigDef's wording.
func validateConfig(typ int8, name, value string) *apiError {
	defs, what := topicConfigs, "topic"
	if typ == record.ResourceBroker {
		defs, what = brokerConfigs, "broker"
	}
	def, ok := defs[name]
	if !ok {
		if _, isTopic := topicConfigs[name]; isTopic && typ == record.ResourceBroker {
			return refuse(kerr.InvalidConfig, "%s is a topic config, not a broker config", name)
		}
		return refuse(kerr.InvalidConfig, "Unknown %s config name: %s", what, name)
	}
	limit := maxScalarValueBytes
	if def.typ == typeList {
		limit = maxListValueBytes
	}
	if len(value) > limit {
		return refuse(kerr.InvalidConfig, "Invalid value of %d bytes for configuration %s: a %s value is at most %d bytes", len(value), name, def.typ, limit)
	}
	return def.check(name, value)
}

// check checks value against the definition, as ConfigDef.parseType and
// the config's validator do.
func (d configDef) check(name, value string) *apiError {
	v := strings.TrimSpace(value)
	switch d.typ {
	case typeInt, typeLong, typeDouble:
		var n float64
		var err error
		switch d.typ {
		case typeInt:
			var i int64
			i, err = strconv.ParseInt(v, 10, 32)
			n = float64(i)
		case typeLong:
			var i int64
			i, err = strconv.ParseInt(v, 10, 64)
			n = float64(i)
		default:
			n, err = strconv.ParseFloat(v, 64)
			if err == nil && (math.IsNaN(n) || math.IsInf(n, 0)) {
				err = fmt.Errorf("not finite")
			}
		}
		if err != nil {
			return refuse(kerr.InvalidConfig, "Invalid value %s for configuration %s: Not a number of type %s", value, name, d.typ)
		}
		if d.hasOr && n == d.orValue {
			return nil
		}
		if n < d.min {
			return refuse(kerr.InvalidConfig, "Invalid value %s for configuration %s: Value must be at least %s", v, name, strconv.FormatFloat(d.min, 'f', -1, 64))
		}
		if n > d.max {
			return refuse(kerr.InvalidConfig, "Invalid value %s for configuration %s: Value must be no more than %s", v, name, strconv.FormatFloat(d.max, 'f', -1, 64))
		}
	case typeBoolean:
		switch strings.ToLower(v) {
		case "true", "false":
		default:
			return refuse(kerr.InvalidConfig, "Invalid value %s for configuration %s: Expected value to be either true or false", value, name)
		}
	case typeString:
		if d.oneOf != nil && !contains(d.oneOf, v) {
			return refuse(kerr.InvalidConfig, "Invalid value %s for configuration %s: String must be one of: %s", value, name, strings.Join(d.oneOf, ", "))
		}
	case typeList:
		if name == leaderThrottledReplicas || name == followerThrottledReplicas {
			return checkThrottledReplicas(name, value)
		}
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); !contains(d.oneOf, item) {
				return refuse(kerr.InvalidConfig, "Invalid value %s for configuration %s: String must be one of: %s", value, name, strings.Join(d.oneOf, ", "))
			}
		}
	}
	return nil
}

// checkThrottledReplicas is Kafka's ThrottledReplicaListValidator: the
// literal '*' or a list of partition:broker pairs.
func checkThrottledReplicas(name, value string) *apiError {
	parts := strings.Split(value, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	ok := strings.Join(parts, "") == "*"
	if !ok {
		ok = true
		for _, p := range parts {
			ok = ok && throttledReplica.MatchString(p)
		}
	}
	if !ok {
		return refuse(kerr.InvalidConfig, "Invalid value [%s] for configuration %s: %s must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
			strings.Join(parts, ", "), name, name)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
