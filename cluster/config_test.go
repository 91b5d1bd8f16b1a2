package cluster

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/server"
	"github.com/kraftlab/kraftlab/storage"
)

func TestKafkaProfileIsKafkasDefaults(t *testing.T) {
	want := map[string]string{
		"controller.quorum.election.timeout.ms":           "1000",
		"controller.quorum.fetch.timeout.ms":              "2000",
		"controller.quorum.election.backoff.max.ms":       "1000",
		"controller.quorum.request.timeout.ms":            "2000",
		"controller.quorum.retry.backoff.ms":              "20",
		"controller.quorum.append.linger.ms":              "25",
		"kraftlab.quorum.fetch.max.wait.ms":               "500",
		"kraftlab.quorum.flush":                           "always",
		"kraftlab.quorum.replication":                     "pull",
		"metadata.max.idle.interval.ms":                   "500",
		"metadata.log.max.record.bytes.between.snapshots": "20971520",
		"metadata.log.max.snapshot.interval.ms":           "3600000",
		"broker.session.timeout.ms":                       "9000",
		"broker.heartbeat.interval.ms":                    "2000",
		// Kafka 3.9's ZkConfigs.
		"zookeeper.session.timeout.ms": "18000",
		// ReplicationConfigs, ServerLogConfigs and LogConfig's defaults.
		"num.replica.fetchers":             "1",
		"replica.lag.time.max.ms":          "30000",
		"replica.fetch.wait.max.ms":        "500",
		"replica.fetch.backoff.ms":         "1000",
		"replica.fetch.min.bytes":          "1",
		"replica.fetch.max.bytes":          "1048576",
		"replica.fetch.response.max.bytes": "10485760",
		"min.insync.replicas":              "1",
		"eligible.leader.replicas.version": "1",
		// kafka-storage format --standalone or --initial-controllers: dynamic.
		"kraft.version":                           "1",
		"unclean.leader.election.enable":          "false",
		"unclean.leader.election.interval.ms":     "300000",
		"auto.leader.rebalance.enable":            "true",
		"leader.imbalance.check.interval.seconds": "300",
		// GroupCoordinatorConfig's defaults.
		"offsets.topic.num.partitions":         "50",
		"offsets.topic.replication.factor":     "3",
		"group.initial.rebalance.delay.ms":     "3000",
		"group.consumer.session.timeout.ms":    "45000",
		"group.consumer.heartbeat.interval.ms": "5000",
		// KIP-578's name (its default is unbounded; see config.go), and
		// ServerConfigs' defaults.
		"max.broker.partitions": "1000",
		"message.max.bytes":     "1048588",
		"fetch.max.bytes":       "57671680",
		// SocketServerConfigs and BrokerSecurityConfigs.
		"socket.request.max.bytes":                  "104857600",
		"max.connections.per.ip":                    "2147483647",
		"connections.max.idle.ms":                   "600000",
		"connection.failed.authentication.delay.ms": "100",
		"sasl.server.max.receive.size":              "524288",
		// Bounded in every profile, where Kafka's defaults are not
		// (queued.max.request.bytes -1, max.connections 2147483647):
		// every node of a playground shares one process.
		"queued.max.request.bytes": "33554432",
		"max.connections":          "1024",
		// kraftlab's own: Kafka's controllers read 100 MiB but serve
		// nothing larger than 1 MiB here; Kafka bounds no login.
		"kraftlab.controller.socket.request.max.bytes": "1048576",
		"kraftlab.sasl.authentication.timeout.ms":      "10000",
	}
	tm, err := ProfileSettings(ProfileKafka)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(server.Keys()) {
		t.Errorf("test covers %d keys, there are %d", len(want), len(server.Keys()))
	}
	for k, v := range want {
		got, err := tm.Get(k)
		if err != nil || got != v {
			t.Errorf("kafka %s = %q, %v; want %q", k, got, err, v)
		}
	}
}

func TestProfilesAreValidAndKeepKafkasOrder(t *testing.T) {
	for _, p := range Profiles() {
		name := p.Name
		tm, err := ProfileSettings(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := tm.Validate(); err != nil {
			t.Errorf("profile %s: %v", name, err)
		}
		if !(tm.ElectionTimeout < tm.FetchTimeout && tm.FetchMaxWait*4 <= tm.FetchTimeout) {
			t.Errorf("profile %s breaks Kafka's order of timeouts: %+v", name, tm)
		}
	}
}

// The workshop profile's promise: every effect shows within about ten
// seconds of its cause.
func TestWorkshopEffectsShowWithinTenSeconds(t *testing.T) {
	tm, _ := ProfileSettings(ProfileWorkshop)
	effects := map[string]time.Duration{
		"election after a kill (fetch timeout + one election round)": tm.FetchTimeout + 2*tm.ElectionTimeout,
		"check-quorum resignation":                                   tm.FetchTimeout * 3 / 2,
	}
	for what, d := range effects {
		if d > 10*time.Second {
			t.Errorf("%s takes up to %v", what, d)
		}
	}
	// Slow enough to watch: a failover should not be over before a person
	// has looked at the screen.
	if tm.FetchTimeout < 3*time.Second {
		t.Errorf("fetch timeout %v is too quick to watch", tm.FetchTimeout)
	}
	fast, _ := ProfileSettings(ProfileFast)
	if fast.FetchTimeout+fast.ElectionTimeout > 300*time.Millisecond {
		t.Errorf("fast profile elects after up to %v", fast.FetchTimeout+fast.ElectionTimeout)
	}
}

func TestSetOverrides(t *testing.T) {
	c, err := NewConfig(5, 0, ProfileFast, []string{
		"controller.quorum.fetch.timeout.ms=900",
		" controller.quorum.append.linger.ms = 4 ",
		"kraftlab.quorum.flush=always",
		"controller.quorum.fetch.timeout.ms=1000", // the last one wins
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Settings.FetchTimeout != time.Second || c.Settings.AppendLinger != 4*time.Millisecond || c.Settings.Flush != storage.FlushAlways {
		t.Errorf("overrides not applied: %+v", c.Settings)
	}
	if c.Profile != ProfileFast || c.Controllers != 5 || c.Brokers != 0 {
		t.Errorf("shape: %+v", c)
	}
	for _, k := range server.Keys() {
		v, _ := c.Settings.Get(k)
		if err := c.Settings.Set(k, v); err != nil {
			t.Errorf("Set(Get(%s)) = %v", k, err)
		}
	}
}

func TestSetErrors(t *testing.T) {
	cases := []struct {
		set  string
		want []string
	}{
		{"controller.quorum.fetch.timout.ms=10", []string{`unknown config key "controller.quorum.fetch.timout.ms"`, "did you mean controller.quorum.fetch.timeout.ms?", "valid keys:", "metadata.max.idle.interval.ms"}},
		{"zookeeper.connect=x", []string{"unknown config key", "valid keys: controller.quorum.election.timeout.ms"}},
		{"controller.quorum.fetch.timeout.ms", []string{"want key=value"}},
		{"=5", []string{"want key=value"}},
		{"controller.quorum.fetch.timeout.ms=2s", []string{`bad value "2s"`, "whole number of ms", "e.g. 2000"}},
		{"controller.quorum.fetch.timeout.ms=1.5", []string{`bad value "1.5"`}},
		{"controller.quorum.fetch.timeout.ms=0", []string{"bad value 0", "between 1 and 86400000 ms"}},
		{"controller.quorum.fetch.timeout.ms=-5", []string{"between 1"}},
		{"controller.quorum.election.timeout.ms=99999999999", []string{"between 1 and 86400000"}},
		{"metadata.log.max.record.bytes.between.snapshots=2147483648", []string{"between 1 and 1073741824 bytes"}},
		{"replica.lag.time.mx.ms=30000", []string{`unknown config key "replica.lag.time.mx.ms"`, "did you mean replica.lag.time.max.ms?"}},
		{"num.replica.fetchers=0", []string{"bad value 0 for num.replica.fetchers", "between 1 and 64"}},
		{"num.replica.fetchers=65", []string{"between 1 and 64"}},
		{"replica.fetch.max.bytes=0", []string{"bad value 0 for replica.fetch.max.bytes", "between 1 and 1073741824 bytes"}},
		{"min.insync.replicas=0", []string{"bad value 0 for min.insync.replicas", "between 1 and 99"}},
		{"unclean.leader.election.enable=yes", []string{`bad value "yes" for unclean.leader.election.enable`, "want true or false"}},
		{"replica.fetch.wait.max.ms=7000", []string{"replica.fetch.wait.max.ms must be at most replica.lag.time.max.ms", "=7000", "=6000", "fall out of the ISR"}},
		{"broker.heartbeat.interval.ms=5000", []string{"broker.heartbeat.interval.ms must be at most half of broker.session.timeout.ms", "=5000", "=6000"}},
		{"kraftlab.quorum.flush=sometimes", []string{`bad value "sometimes"`, "always or never"}},
		{"kraftlab.quorum.replication=both", []string{`bad value "both" for kraftlab.quorum.replication`, "pull or push"}},
		{"kraftlab.quorum.fetch.max.wait.ms=5000", []string{"kraftlab.quorum.fetch.max.wait.ms must be less than controller.quorum.fetch.timeout.ms", "=5000", "=4000"}},
	}
	for _, tc := range cases {
		_, err := NewConfig(3, 3, "", []string{tc.set}, "")
		if err == nil {
			t.Errorf("--set %s: no error", tc.set)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("--set %s: error %q lacks %q", tc.set, err, w)
			}
		}
	}
	_, err := NewConfig(3, 3, "", []string{"nope=1"}, "")
	if !errors.Is(err, server.ErrUnknownKey) {
		t.Errorf("unknown key error %v does not wrap ErrUnknownKey", err)
	}
}

func TestConfigShapeErrors(t *testing.T) {
	cases := []struct {
		c, b    int
		profile ProfileName
		want    string
	}{
		{0, 3, "", "controllers must be between 1 and 99, got 0"},
		{100, 3, "", "controllers must be between 1 and 99"},
		{3, -1, "", "brokers must be between 0 and 99, got -1"},
		{3, 100, "", "brokers must be between 0 and 99"},
		{3, 3, "slow", `unknown profile "slow"; valid profiles: workshop, kafka, fast`},
	}
	for _, tc := range cases {
		_, err := NewConfig(tc.c, tc.b, tc.profile, nil, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewConfig(%d, %d, %q) = %v; want %q", tc.c, tc.b, tc.profile, err, tc.want)
		}
	}
}

func TestDefaultConfigAndIDs(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Profile != ProfileWorkshop || c.Controllers != 3 || c.Brokers != 3 {
		t.Errorf("default %+v", c)
	}
	if got := c.ControllerIDs(); len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Errorf("controller IDs %v", got)
	}
	if got := c.BrokerIDs(); len(got) != 3 || got[0] != 101 || got[2] != 103 {
		t.Errorf("broker IDs %v", got)
	}
}

func TestValidateCatchesDirectStructEdits(t *testing.T) {
	tm, _ := ProfileSettings(ProfileKafka)
	tm.FetchTimeout = 1500 * time.Microsecond
	if err := tm.Validate(); err == nil || !strings.Contains(err.Error(), "whole milliseconds") {
		t.Errorf("sub-millisecond timeout: %v", err)
	}
	tm, _ = ProfileSettings(ProfileKafka)
	tm.Flush = storage.FlushInterval // not one a playground takes
	if err := tm.Validate(); err == nil {
		t.Error("bad flush policy accepted")
	}
}

func TestDataPlaneSettings(t *testing.T) {
	c, err := NewConfig(3, 3, ProfileFast, []string{
		"num.replica.fetchers=4",
		"replica.lag.time.max.ms=2500",
		"replica.fetch.max.bytes=65536",
		"min.insync.replicas=2",
		"unclean.leader.election.enable=TRUE", // Kafka takes either case
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	tm := c.Settings
	if tm.NumReplicaFetchers != 4 || tm.ReplicaLagTimeMax != 2500*time.Millisecond || tm.ReplicaFetchMaxBytes != 65536 ||
		tm.MinInsyncReplicas != 2 || !tm.UncleanLeaderElectionEnable {
		t.Errorf("data-plane overrides not applied: %+v", tm)
	}
	if got, _ := tm.Get("unclean.leader.election.enable"); got != "true" {
		t.Errorf("Get(unclean.leader.election.enable) = %q", got)
	}
	for _, pr := range Profiles() {
		name := pr.Name
		p, _ := ProfileSettings(name)
		// The ISR check runs every lag/2, and a parked follower fetch must
		// not count as lagging.
		if p.ReplicaFetchWaitMax*2 > p.ReplicaLagTimeMax {
			t.Errorf("profile %s: fetch wait %v is too close to the lag time %v", name, p.ReplicaFetchWaitMax, p.ReplicaLagTimeMax)
		}
	}
	// The workshop promise: an ISR shrink (lag time, checked every lag/2)
	// shows within about ten seconds.
	w, _ := ProfileSettings(ProfileWorkshop)
	if d := w.ReplicaLagTimeMax * 3 / 2; d > 10*time.Second {
		t.Errorf("workshop ISR shrink takes up to %v", d)
	}
}

func TestSettingsDocumentEveryKey(t *testing.T) {
	for _, s := range server.SettingKeys() {
		if s.Doc == "" || s.Unit == "" {
			t.Errorf("%s lacks doc or unit: %+v", s.Key, s)
		}
	}
}

func TestListenerSettings(t *testing.T) {
	c, err := NewConfig(3, 3, ProfileFast, []string{
		"socket.request.max.bytes=2097152",
		"queued.max.request.bytes=-1",
		"max.connections=10",
		"connection.failed.authentication.delay.ms=0",
		"sasl.server.max.receive.size=4096",
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	tm := c.Settings
	if tm.SocketRequestMaxBytes != 2<<20 || tm.QueuedMaxRequestBytes != -1 || tm.MaxConnections != 10 ||
		tm.FailedAuthenticationDelay != 0 || tm.SaslServerMaxReceiveSize != 4096 {
		t.Errorf("listener overrides not applied: %+v", tm)
	}
	for _, kv := range []string{
		"kraftlab.controller.socket.request.max.bytes=2097152", // more than a controller reads
		"max.connections=0",
		"connection.failed.authentication.delay.ms=600000", // not less than connections.max.idle.ms
	} {
		if _, err := NewConfig(3, 3, ProfileFast, []string{kv}, ""); err == nil {
			t.Errorf("%s accepted", kv)
		}
	}
	_, err = NewConfig(3, 3, ProfileFast, []string{"max.connections=many"}, "")
	if err == nil || !strings.Contains(err.Error(), "Kafka's is 2147483647") {
		t.Errorf("a bad max.connections: %v", err)
	}
	for _, s := range SettingKeys() {
		if s.Key == "sasl.server.max.receive.size" && s.Unit != "bytes" {
			t.Errorf("sasl.server.max.receive.size in %s", s.Unit)
		}
	}
}

// The offsets topic is smaller outside the kafka profile, so that a
// screen shows each partition's leader, and a test's group rebalances
// without Kafka's 3 s initial delay.
func TestProfilesShrinkTheOffsetsTopic(t *testing.T) {
	for name, want := range map[ProfileName]struct {
		partitions int64
		delay      time.Duration
	}{
		ProfileKafka:    {50, 3 * time.Second},
		ProfileWorkshop: {5, 3 * time.Second},
		ProfileFast:     {3, 100 * time.Millisecond},
	} {
		s, err := ProfileSettings(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.OffsetsTopicNumPartitions != want.partitions || s.OffsetsTopicReplicationFactor != 3 || s.GroupInitialRebalanceDelay != want.delay {
			t.Errorf("profile %s: offsets topic %d partitions of %d replicas, initial delay %v; want %d, 3, %v", name,
				s.OffsetsTopicNumPartitions, s.OffsetsTopicReplicationFactor, s.GroupInitialRebalanceDelay, want.partitions, want.delay)
		}
	}
}
