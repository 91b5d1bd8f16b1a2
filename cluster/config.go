package cluster

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/kraftlab/kraftlab/server"
)

// Limits of a playground's shape. Controllers take IDs 1..N and brokers
// 101..100+M, so neither range may reach the other.
const (
	MaxControllers = 99
	MaxBrokers     = 99
	// FirstBrokerID is the ID of the first broker; broker i has FirstBrokerID+i-1.
	FirstBrokerID = 101
	// SimControllers and SimBrokers are the shape of a simulated
	// playground, the whole-cluster simulation's.
	SimControllers = 3
	SimBrokers     = 3
)

// Mode is where a playground's metadata comes from.
type Mode string

// The modes.
const (
	// ModeKRaft is Kafka 4's: the metadata log the KRaft controllers
	// replicate, which the brokers fetch.
	ModeKRaft Mode = "kraft"
	// ModeZK is Kafka 3.9's ZooKeeper era: a real ZooKeeper, a controller
	// elected among the brokers through it, and its pushes of
	// LeaderAndIsr and UpdateMetadata.
	ModeZK Mode = "zk"
)

// Modes are the modes, the default first.
var Modes = []Mode{ModeKRaft, ModeZK}

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("bad mode %q: want kraft (Kafka 4's KRaft, the default) or zk (Kafka 3.9's ZooKeeper-era controller on a real ZooKeeper)", s)
}

// Config is everything the Engine needs to start a playground.
type Config struct {
	// Mode is where the metadata comes from; empty is ModeKRaft.
	Mode Mode
	// Controllers is the number of KRaft voters, with node IDs
	// 1..Controllers; 0 in ModeZK, whose controller is a broker.
	Controllers int
	// Brokers is the number of brokers, with node IDs 101..100+Brokers. They
	// observe the metadata quorum: they fetch it but never vote.
	Brokers int
	// Profile names the profile Settings started from.
	Profile ProfileName
	// Settings are the servers' settings: the profile's, after --set
	// overrides.
	Settings server.Settings
	// DataDir is where the nodes keep their logs, one folder per node. Empty
	// means a fresh temporary folder that Engine.Close removes; a folder the
	// user named is kept.
	DataDir string
	// Sim runs the cluster under the seeded simulator (kraftlab up
	// --sim): every part on one simulated network and clock, a function
	// of Seed and the actions.
	Sim  bool
	Seed uint64
	// Logger, if set, receives every node's server log (Kafka's
	// server.log), each line with its node's ID; nil discards it.
	Logger *slog.Logger
}

// DefaultConfig is the shape `kraftlab up` starts without flags: three
// controllers and three brokers on the workshop profile.
func DefaultConfig() Config {
	s, _ := ProfileSettings(DefaultProfile)
	return Config{Controllers: 3, Brokers: 3, Profile: DefaultProfile, Settings: s}
}

// NewConfig builds a Config from a profile name and key=value overrides
// (Kafka config names, applied in order) and validates it.
func NewConfig(controllers, brokers int, profile ProfileName, overrides []string, dataDir string) (Config, error) {
	return NewConfigMode(ModeKRaft, controllers, brokers, profile, overrides, dataDir)
}

// NewConfigMode is NewConfig in mode.
func NewConfigMode(mode Mode, controllers, brokers int, profile ProfileName, overrides []string, dataDir string) (Config, error) {
	if profile == "" {
		profile = DefaultProfile
	}
	s, err := ProfileSettings(profile)
	if err != nil {
		return Config{}, err
	}
	if err := s.Apply(overrides); err != nil {
		return Config{}, err
	}
	c := Config{Mode: mode, Controllers: controllers, Brokers: brokers, Profile: profile, Settings: s, DataDir: dataDir}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate checks the shape and the settings.
func (c Config) Validate() error {
	if c.Mode == ModeZK {
		switch {
		case c.Sim:
			return fmt.Errorf("--sim runs KRaft only; leave out --mode zk")
		case c.Controllers != 0:
			return fmt.Errorf("zk mode has no KRaft controllers (its controller is a broker elected through ZooKeeper); leave out --controllers")
		case c.Brokers < 1 || c.Brokers > MaxBrokers:
			return fmt.Errorf("brokers must be between 1 and %d in zk mode, got %d", MaxBrokers, c.Brokers)
		}
		return c.Settings.Validate()
	}
	if c.Mode != "" && c.Mode != ModeKRaft {
		return fmt.Errorf("unknown mode %q", c.Mode)
	}
	if c.Sim && (c.Controllers != SimControllers || c.Brokers != SimBrokers) {
		return fmt.Errorf("--sim runs %d controllers and %d brokers, got %d and %d", SimControllers, SimBrokers, c.Controllers, c.Brokers)
	}
	if c.Controllers < 1 || c.Controllers > MaxControllers {
		return fmt.Errorf("controllers must be between 1 and %d, got %d", MaxControllers, c.Controllers)
	}
	if c.Brokers < 0 || c.Brokers > MaxBrokers {
		return fmt.Errorf("brokers must be between 0 and %d, got %d", MaxBrokers, c.Brokers)
	}
	return c.Settings.Validate()
}

// ControllerIDs returns the controllers' node IDs, 1..Controllers.
func (c Config) ControllerIDs() []int32 {
	ids := make([]int32, c.Controllers)
	for i := range ids {
		ids[i] = int32(i + 1)
	}
	return ids
}

// BrokerIDs returns the brokers' node IDs, 101..100+Brokers.
func (c Config) BrokerIDs() []int32 {
	ids := make([]int32, c.Brokers)
	for i := range ids {
		ids[i] = int32(FirstBrokerID + i)
	}
	return ids
}

// ProfileName names a profile.
type ProfileName string

// The profiles.
const (
	ProfileWorkshop ProfileName = "workshop"
	ProfileKafka    ProfileName = "kafka"
	ProfileFast     ProfileName = "fast"
	DefaultProfile              = ProfileWorkshop
)

// Profile is a named set of overrides of Kafka's defaults
// (server.DefaultSettings), by Kafka key, as --set takes them.
type Profile struct {
	Name      ProfileName
	Overrides []string
}

// profiles are the profiles, the default first.
//
// workshop is tuned for a projector. Kafka's quorum is already quick (a
// failover takes about two seconds), too quick to watch. So the quorum is
// stretched, keeping Kafka's order and ratios where they matter:
//   - fetch timeout 4 s, election timeout 2 s (Kafka's 2:1): after a kill the
//     followers' "last fetch" visibly ages for a few seconds, then Prospective
//     and Candidate last long enough to be seen at the TUI's refresh rate, and
//     a new leader appears within about 5 s; an isolated leader resigns after
//     1.5 × 4 = 6 s (check-quorum).
//   - the parked-fetch wait (1 s) and the NoOpRecord interval (1 s) keep
//     Kafka's 1/4 ratio to the fetch timeout; the log end offset then ticks
//     once a second, slowly enough to read.
//   - brokers heartbeat every 1.5 s and are fenced after 6 s without one
//     (Kafka's 2 s and 9 s, about the same 1:4.5): a cut-off broker is
//     fenced within a few seconds, after several missed heartbeats. In zk
//     mode a broker's ZooKeeper session lasts 12 s, twice the fencing, as
//     Kafka's 18 s is twice its 9 s.
//   - a stuck follower leaves the ISR after 6 s (Kafka's 30 s), checked
//     every 3 s, so a shrink shows within ten seconds of a kill; fetches
//     keep Kafka's 500 ms wait, well under it. An unclean election, when
//     a topic allows one, comes within 5 s (Kafka looks every 5 min), and
//     leadership returns to a restarted preferred replica within 10 s
//     (Kafka looks every 5 min).
//   - __consumer_offsets has 5 partitions (Kafka's 50), few enough to see
//     each one's leader and which groups it holds.
//
// kafka is Kafka's defaults, overriding nothing.
//
// fast is for tests and scenarios: Kafka's quorum timing divided by ten,
// so that a failover takes a few hundred milliseconds, with the same 1/4
// ratio of parked-fetch wait and NoOpRecord interval to the fetch timeout.
// Writes are not fsynced. If spurious elections show up under the race
// detector on a busy 2-core machine, raise the fetch timeout first. The
// data plane is scaled less than the quorum: a follower leaves the ISR
// after 1.5 s, because a fetcher starved of CPU for a few hundred
// milliseconds must not flap the ISR of a test that did not ask for it,
// and leaderships stay where a failover put them (no automatic preferred
// leader elections) unless a test turns them on. __consumer_offsets has
// 3 partitions, and an empty group's first rebalance waits 100 ms for more
// members (Kafka's 3 s).
var profiles = []Profile{
	{ProfileWorkshop, []string{
		"controller.quorum.election.timeout.ms=2000",
		"controller.quorum.fetch.timeout.ms=4000",
		"controller.quorum.election.backoff.max.ms=2000",
		"controller.quorum.request.timeout.ms=4000",
		"controller.quorum.retry.backoff.ms=40",
		"kraftlab.quorum.fetch.max.wait.ms=1000",
		"metadata.max.idle.interval.ms=1000",
		"broker.session.timeout.ms=6000",
		"broker.heartbeat.interval.ms=1500",
		"zookeeper.session.timeout.ms=12000",
		"replica.lag.time.max.ms=6000",
		"unclean.leader.election.interval.ms=5000",
		"leader.imbalance.check.interval.seconds=10",
		"offsets.topic.num.partitions=5",
	}},
	{ProfileKafka, nil},
	{ProfileFast, []string{
		"controller.quorum.election.timeout.ms=100",
		"controller.quorum.fetch.timeout.ms=200",
		"controller.quorum.election.backoff.max.ms=100",
		"controller.quorum.request.timeout.ms=200",
		"controller.quorum.retry.backoff.ms=10",
		"controller.quorum.append.linger.ms=5",
		"kraftlab.quorum.fetch.max.wait.ms=50",
		"kraftlab.quorum.flush=never",
		"metadata.max.idle.interval.ms=50",
		"broker.session.timeout.ms=900",
		"broker.heartbeat.interval.ms=200",
		"zookeeper.session.timeout.ms=2000",
		"replica.lag.time.max.ms=1500",
		"replica.fetch.wait.max.ms=50",
		"replica.fetch.backoff.ms=100",
		"unclean.leader.election.interval.ms=200",
		"auto.leader.rebalance.enable=false",
		"offsets.topic.num.partitions=3",
		"group.initial.rebalance.delay.ms=100",
		"group.consumer.session.timeout.ms=10000",
		"group.consumer.heartbeat.interval.ms=500",
	}},
}

// Profiles lists the profiles, the default first.
func Profiles() []Profile { return append([]Profile(nil), profiles...) }

// ProfileNames lists the profiles' names, the default first.
func ProfileNames() []string {
	out := make([]string, len(profiles))
	for i, p := range profiles {
		out[i] = string(p.Name)
	}
	return out
}

// ProfileSettings returns a profile's settings: Kafka's defaults with its
// overrides.
func ProfileSettings(name ProfileName) (server.Settings, error) {
	for _, p := range profiles {
		if p.Name == name {
			s := server.DefaultSettings()
			if err := s.Apply(p.Overrides); err != nil {
				return server.Settings{}, fmt.Errorf("profile %s: %w", name, err)
			}
			return s, nil
		}
	}
	return server.Settings{}, fmt.Errorf("unknown profile %q; valid profiles: %s", name, strings.Join(ProfileNames(), ", "))
}

// SettingKeys lists every key --set accepts, with its unit and what it
// does, in the order a reader meets them (server.SettingKeys).
func SettingKeys() []server.Setting { return server.SettingKeys() }
