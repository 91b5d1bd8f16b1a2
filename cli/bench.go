package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/benchkit"
	"github.com/kraftlab/kraftlab/cluster"
)

func newBenchCommand(e *env) *cobra.Command {
	noScenario := map[string]string{annotNoScenario: "a benchmark runs its own quorums, apart from any playground"}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure kraftlab: quorum commits, failover, metadata propagation and scale, produce",
		Long: `Bench measures kraftlab's KRaft quorum on this machine: three voters (and,
for metadata, brokers) in this process talking Kafka's protocol over loopback
TCP, with their logs on disk. It starts its own clusters and needs no
playground.

"bench quorum" measures commits; "bench failover" measures leader changes;
"bench metadata" measures metadata reaching brokers, large images and
controller failover; "bench produce" measures real Kafka clients producing
and consuming through the brokers' data plane.
To see the same commit workload on hashicorp/raft and etcd raft in the same
run, with ratios, run the bench module from a kraftlab source tree:
cd bench && go run . quorum`,
		Annotations: noScenario,
	}
	// The comparison of push and pull may be a lesson's or a scenario's
	// line: it measures its own quorums while the playground idles.
	quorum := map[string]string{annotNoScenario: noScenario[annotNoScenario], annotScenarioWith: "quorum,observers"}
	cmd.AddCommand(newBenchQuorumCommand(e, quorum), newBenchFailoverCommand(noScenario), newBenchMetadataCommand(noScenario), newBenchProduceCommand(noScenario))
	return cmd
}

func newBenchQuorumCommand(e *env, annotations map[string]string) *cobra.Command {
	var f benchkit.Flags
	cmd := &cobra.Command{
		Use:   "quorum [flags]",
		Short: "Commit throughput and latency of a 3-voter quorum, next to the machine's floors",
		Long: `Quorum runs a matrix of cases, each on a fresh 3-voter quorum: record sizes,
flush never (the log is written but not fsynced) and flush always (a voter
fsyncs before its log end offset counts), closed loops of 1 and 64 writers
and an open loop at a fixed rate. A record counts once the leader's high
watermark covers it. Each case reports records/s, MB/s, commit latency
p50/p99/p99.9, CPU µs and heap allocations per committed record.

The floors come first: one loopback TCP round trip (64 B ping-pong), one
4 KiB write + fdatasync in the data folder, and three of those at once until
two have synced (the disk's part of a commit when the voters share it);
×floor is the p50 commit latency over the round trip or the one fsync. The machine's noise (other processes, a shared or
virtual CPU) moves every figure: compare runs made back to back.

kraftlab runs Kafka's quorum timing with controller.quorum.append.linger.ms=0
(the leader batches whatever queued while it worked or no Fetch waited);
--systems
kraftlab-linger adds Kafka's 25 ms linger, --systems kraftlab-push the same
quorum replicating by push.

--quorum pull,push and --observers 0,10,50,200 (either names the run)
compare push and pull on the one engine instead: for each mode and number
of observers (whole brokers observing the quorum, as a playground's do),
for each writer count, flush never: records/s, commit p50 and p99, the
quorum's messages and bytes on the wire per record (requests and
responses of every node), and CPU per record: the process's, and its split
by node (the leader, one follower, all observers) from a CPU profile of
the window, in which each node's goroutines carry a label naming it.
With one writer it also splits the commits into legs (each message is
stamped at both ends of its connection): waiting for a Fetch (pull), the
leader to the send, the way to the follower, the follower to its
acknowledgement, the way back, the leader to the writer.
Such a comparison may be a scenario's or a lesson's line (the lesson
why-pull runs two): it measures quorums of its own while the playground
idles beside it.`,
		Example:     indentExample("kraftlab bench quorum\nkraftlab bench quorum --sizes 256 --writers 1,64 --rate 0\nkraftlab bench quorum --quorum pull,push --observers 0,10,50,200\nkraftlab bench quorum --json --flush always\ncd bench && go run . quorum    # with hashicorp/raft and etcd raft"),
		Args:        cobra.NoArgs,
		Annotations: annotations,
	}
	fs := flag.NewFlagSet("quorum", flag.ContinueOnError)
	f.Register(fs, "kraftlab")
	cmd.Flags().AddGoFlagSet(fs)
	var quorumModes, observers string
	cmd.Flags().StringVar(&quorumModes, "quorum", "pull,push", "with --observers or alone: the replication modes to compare on one engine, pull (Kafka's) and push (classic Raft), flush never, record size 256 unless --sizes says")
	cmd.Flags().StringVar(&observers, "observers", "0,10,50,200", "with --quorum or alone: how many observers (whole brokers, IDs 101 up) each case's quorum has")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if cmd.Flags().Changed("quorum") || cmd.Flags().Changed("observers") {
			return runBenchModes(e, cmd, &f, quorumModes, observers)
		}
		cfg, err := f.Config(benchkit.KraftlabFactories())
		if err != nil {
			return usagef("%v", err)
		}
		err = benchkit.Main(cmd.Context(), cfg, f.JSON, cmd.OutOrStdout(), cmd.ErrOrStderr())
		if err != nil {
			return failedf("bench quorum: %w", err)
		}
		if !f.JSON {
			fmt.Fprintf(cmd.OutOrStdout(), "\nkraftlab alone. For hashicorp/raft and etcd raft in the same run, with ratios, from a kraftlab source tree:\n  cd bench && go run . quorum\n")
		}
		return nil
	}
	return cmd
}

func newBenchFailoverCommand(annotations map[string]string) *cobra.Command {
	var (
		profiles, changes string
		rounds            int
		voters            []int
		set               []string
		dir               string
		modes, plot       string
		partitions        []int
	)
	cmd := &cobra.Command{
		Use:   "failover [flags]",
		Short: "Time to a new leader and to its first commit after the leader is killed, stopped or resigns",
		Long: `Failover starts a quorum (3 voters, or each size --voters names) with a
timing profile and changes its leader
again and again: kill (as kill -9: the followers notice only when
controller.quorum.fetch.timeout.ms passes without a fetch), stop (a graceful
shutdown: the leader resigns with EndQuorumEpoch first) and resign (the
leader resigns and stays a voter). After each change it waits for the new
leader and its first commit, then restarts the old leader and waits for it
to catch up before the next round.

With --mode it compares instead how long a cluster stays unmanaged when
its active controller dies, in KRaft mode and in zk mode (Kafka 3.9's
controller on a real ZooKeeper, which needs Java and ZooKeeper): for each
--partitions size, a cluster of 3 brokers holding that many partitions has
its active controller killed (--rounds times, 1 by default), each time
until the successor answers its first CreateTopics. A zk successor must
wait for ZooKeeper to expire the dead broker's session, then read every
znode and push the whole state; a KRaft one already holds the metadata
log. Then the broker leading the most partitions stops, and its
controlled shutdown is timed until the controller lets it go. --plot
writes the failover comparison as an SVG chart. It runs on one profile
(kafka unless --profiles names another). At 100,000 partitions the zk
leg does not settle on a small machine: its brokers host at most
max.broker.partitions replicas each, and the rest shrink their ISRs.

It reports, per profile and change, the time from the change to the new
leader's election and to its first commit (the high watermark advancing
again), p50, p99 and max, next to the bound: fetch timeout + 2 × election
timeout for a kill, the 100 ms aim for a graceful change.

By default every change runs 20 rounds, except kills on the workshop
profile: 10, since each takes over 4 s (its fetch timeout). The default run
takes about 2 minutes; --profiles, --changes or --rounds trim it.`,
		Example:     indentExample("kraftlab bench failover\nkraftlab bench failover --profiles kafka --changes kill --rounds 5\nkraftlab bench failover --profiles fast --json\nkraftlab bench failover --changes stop,resign --voters 3,5\nkraftlab bench failover --mode zk,kraft --partitions 1000,10000 --plot failover.svg"),
		Args:        cobra.NoArgs,
		Annotations: annotations,
	}
	cmd.Flags().StringVar(&profiles, "profiles", string(cluster.ProfileKafka+","+cluster.ProfileWorkshop), "timing profiles to measure ("+strings.Join(cluster.ProfileNames(), ", ")+")")
	cmd.Flags().StringVar(&changes, "changes", "kill,stop,resign", "how the leadership changes: kill, stop, resign")
	cmd.Flags().IntSliceVar(&voters, "voters", []int{benchkit.DefaultVoters}, "quorum sizes to measure, e.g. 3,5")
	cmd.Flags().IntVarP(&rounds, "rounds", "k", 0, "leader changes per profile and change (default 20; 10 for workshop kills)")
	cmd.Flags().StringArrayVar(&set, "set", nil, "override a timing key for every profile, as kraftlab up --set (repeatable)")
	cmd.Flags().StringVar(&dir, "dir", "", "data folder (default: a fresh temporary folder, removed afterwards)")
	cmd.Flags().StringVar(&modes, "mode", "", "compare controller failover in these modes instead: zk, kraft or zk,kraft")
	cmd.Flags().IntSliceVar(&partitions, "partitions", []int{1000, 10000}, "with --mode: the metadata sizes (partitions) to kill the active controller at")
	cmd.Flags().StringVar(&plot, "plot", "", "with --mode: also write the comparison as an SVG chart to this file")
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if modes != "" {
			return runControllerFailoverBench(cmd, modes, partitions, rounds, profiles, set, dir, plot)
		}
		if plot != "" || cmd.Flags().Changed("partitions") {
			return usagef("--plot and --partitions go with --mode")
		}
		plan := benchkit.FailoverPlan{Rounds: rounds, Set: set, Dir: dir}
		for _, v := range voters {
			if v < 1 || v > 9 {
				return usagef("--voters: %d must be between 1 and 9", v)
			}
			plan.Voters = append(plan.Voters, v)
		}
		for _, p := range strings.Split(profiles, ",") {
			p = strings.TrimSpace(p)
			if _, err := cluster.ProfileSettings(cluster.ProfileName(p)); err != nil {
				return usagef("--profiles: %v", err)
			}
			plan.Profiles = append(plan.Profiles, p)
		}
		for _, c := range strings.Split(changes, ",") {
			ch := benchkit.Change(strings.TrimSpace(c))
			if !slices.Contains(benchkit.Changes(), ch) {
				return usagef("--changes: %q is not kill, stop or resign", c)
			}
			plan.Changes = append(plan.Changes, ch)
		}
		if rounds < 0 {
			return usagef("--rounds: %d is negative", rounds)
		}
		for _, p := range plan.Profiles {
			t, _ := cluster.ProfileSettings(cluster.ProfileName(p))
			if err := t.Apply(set); err != nil {
				return usagef("%v", err)
			}
			if err := t.Validate(); err != nil {
				return usagef("%v", err)
			}
		}
		rs, runErr := benchkit.RunFailovers(cmd.Context(), plan, cmd.ErrOrStderr())
		var err error
		if wantJSON(cmd) {
			err = printJSON(cmd.OutOrStdout(), rs)
		} else {
			err = benchkit.WriteFailoverTable(cmd.OutOrStdout(), rs)
		}
		if runErr != nil {
			return failedf("bench failover: %w", runErr)
		}
		return err
	}
	return cmd
}

func newBenchMetadataCommand(annotations map[string]string) *cobra.Command {
	var (
		quick                 bool
		profile, parts        string
		set                   []string
		partitions, failParts []int
		propParts             []int
		scaleMemoryMB         int64
	)
	cfg := benchkit.DefaultMetadataConfig()
	cmd := &cobra.Command{
		Use:   "metadata [flags]",
		Short: "Metadata propagation to brokers, images of many partitions, controller failover",
		Long: `Metadata measures the metadata layer in three parts.

propagation: 3 controllers and --brokers brokers (50) in this process over
loopback TCP create --changes (200) one-partition topics through the active
controller, one at a time, first on empty metadata, then again once the
metadata holds each --propagation-partitions size (100,000). Each change is timed from its commit (the active
controller's own loader publishing it, which happens once the leader's high
watermark passes the record) to every broker's loader publishing it:
p50, p99 and max for the last broker, for each broker, and the spread
between the first and the last. Aim: all brokers within 50 ms at p99.

scale: for each --partitions size (100,000 and 1,000,000), the live heap of
one image per partition, the time to write it as a snapshot, and, on one
real loader per broker fed that snapshot, the time to load it and to apply
one PartitionChangeRecord on all of them at once (no sockets: the
propagation part measures those). Where --brokers images would not fit
--scale-memory, fewer loaders run and the table says so.

failover: for each --failover-partitions size (1,000 and 100,000), a
cluster with that many partitions has its active controller killed
--rounds times; each is timed from the new leader's election to its
controller's first successful CreateTopics, next to the controller's own
activation time. It should not grow with the metadata.

Everything runs on one timing profile (--profile, kafka by default);
--quick runs every part at tiny sizes on the fast profile in seconds.
The full run took 1.5 minutes on a 2-core machine; its scale part holds up
to --scale-memory (4 GB) of images at once.`,
		Example:     indentExample("kraftlab bench metadata\nkraftlab bench metadata --quick\nkraftlab bench metadata --parts propagation --brokers 20 --changes 50\nkraftlab bench metadata --parts scale --partitions 100000 --json"),
		Args:        cobra.NoArgs,
		Annotations: annotations,
	}
	fl := cmd.Flags()
	fl.BoolVar(&quick, "quick", false, "every part at tiny sizes on the fast profile (flags given still apply)")
	fl.StringVar(&profile, "profile", cfg.Profile, "timing profile ("+strings.Join(cluster.ProfileNames(), ", ")+")")
	fl.StringVar(&parts, "parts", "propagation,scale,failover", "parts to run: propagation, scale, failover")
	fl.IntVar(&cfg.Brokers, "brokers", cfg.Brokers, "brokers of the propagation cluster, and loaders of the scale part")
	fl.IntVar(&cfg.Changes, "changes", cfg.Changes, "metadata changes the propagation part times")
	fl.IntSliceVar(&propParts, "propagation-partitions", cfg.PropagationPartitions, "metadata sizes (partitions created first) the propagation part measures at, on one cluster")
	fl.IntSliceVar(&partitions, "partitions", cfg.Partitions, "image sizes of the scale part")
	fl.IntVar(&cfg.ScaleChanges, "scale-changes", cfg.ScaleChanges, "partition changes the scale part applies on every loader, per size")
	fl.Int64Var(&scaleMemoryMB, "scale-memory", cfg.ScaleMemory/1e6, "MB the scale part's loaders may hold together")
	fl.IntSliceVar(&failParts, "failover-partitions", cfg.FailoverPartitions, "metadata sizes (partitions) the failover part kills the active controller at")
	fl.IntVar(&cfg.FailoverBrokers, "failover-brokers", cfg.FailoverBrokers, "brokers of the failover cluster")
	fl.IntVarP(&cfg.FailoverRounds, "rounds", "k", cfg.FailoverRounds, "kills of the active controller per failover size")
	fl.StringArrayVar(&set, "set", nil, "override a timing key, as kraftlab up --set (repeatable)")
	fl.StringVar(&cfg.Dir, "dir", "", "data folder (default: a fresh temporary folder, removed afterwards)")
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if quick {
			q := benchkit.QuickMetadataConfig()
			keep := func(name string, quickValue func()) {
				if !fl.Changed(name) {
					quickValue()
				}
			}
			keep("profile", func() { profile = q.Profile })
			keep("brokers", func() { cfg.Brokers = q.Brokers })
			keep("changes", func() { cfg.Changes = q.Changes })
			keep("partitions", func() { partitions = q.Partitions })
			keep("propagation-partitions", func() { propParts = q.PropagationPartitions })
			keep("scale-changes", func() { cfg.ScaleChanges = q.ScaleChanges })
			keep("failover-partitions", func() { failParts = q.FailoverPartitions })
			keep("failover-brokers", func() { cfg.FailoverBrokers = q.FailoverBrokers })
			keep("rounds", func() { cfg.FailoverRounds = q.FailoverRounds })
		}
		t, err := cluster.ProfileSettings(cluster.ProfileName(profile))
		if err != nil {
			return usagef("--profile: %v", err)
		}
		if err := t.Apply(set); err != nil {
			return usagef("%v", err)
		}
		cfg.Profile, cfg.Settings = profile, t
		cfg.Partitions, cfg.FailoverPartitions, cfg.PropagationPartitions = partitions, failParts, propParts
		cfg.ScaleMemory = scaleMemoryMB * 1e6
		cfg.Parts = nil
		for _, p := range strings.Split(parts, ",") {
			part := benchkit.MetadataPart(strings.TrimSpace(p))
			if !slices.Contains(benchkit.MetadataParts(), part) {
				return usagef("--parts: %q is not propagation, scale or failover", p)
			}
			cfg.Parts = append(cfg.Parts, part)
		}
		if err := cfg.Validate(); err != nil {
			return usagef("%v", err)
		}
		rep, runErr := benchkit.RunMetadata(cmd.Context(), cfg, cmd.ErrOrStderr())
		if wantJSON(cmd) {
			err = printJSON(cmd.OutOrStdout(), rep)
		} else {
			err = benchkit.WriteMetadataTable(cmd.OutOrStdout(), rep)
		}
		if runErr != nil {
			return failedf("bench metadata: %w", runErr)
		}
		return err
	}
	return cmd
}

func newBenchProduceCommand(annotations map[string]string) *cobra.Command {
	var (
		quick         bool
		profile, acks string
		set           []string
		sizes         []int
	)
	cfg := benchkit.DefaultProduceConfig()
	cmd := &cobra.Command{
		Use:   "produce [flags]",
		Short: "Records/s, MB/s and end-to-end latency of real Kafka clients producing to the brokers",
		Long: `Produce measures the data plane: 3 controllers and --brokers brokers (3)
in this process over loopback TCP, and franz-go's producer and consumer, the
reference Kafka clients. For each --acks setting (all, 1) and --sizes record
size (100 B, 1 KiB), a fresh topic of --partitions partitions (3) and
replication factor 3 takes records for --duration (5s) while a consumer reads
them back: records/s, MB/s, produce latency (handed to the client →
acknowledged) and end-to-end latency (→ read by the consumer, which reads up
to the high watermark, so it waits for the followers' fetches under either
acks), next to one loopback TCP connection's bulk throughput measured in the
same run. Aim: acks=all at 1 KiB reaches 25% of the loopback ceiling.

Then the catch-up part: a follower of a 1-partition topic is stopped while
--catch-up-bytes (64 MiB) are produced, started again, and timed from
hosting its replica to holding its leader's log end: the replica fetcher's
MB/s and the CPU per replicated MB.

Under acks=all the producer is idempotent, as Kafka's clients are by
default; acks=1 cannot be.`,
		Example:     indentExample("kraftlab bench produce\nkraftlab bench produce --quick\nkraftlab bench produce --acks all --sizes 1024 --duration 10s --json"),
		Args:        cobra.NoArgs,
		Annotations: annotations,
	}
	fl := cmd.Flags()
	fl.BoolVar(&quick, "quick", false, "one short case per acks setting and a small catch-up, on the fast profile (flags given still apply)")
	fl.StringVar(&profile, "profile", cfg.Profile, "timing profile ("+strings.Join(cluster.ProfileNames(), ", ")+")")
	fl.IntVar(&cfg.Brokers, "brokers", cfg.Brokers, "brokers of the cluster")
	fl.IntVar(&cfg.Partitions, "partitions", cfg.Partitions, "partitions of each case's topic")
	fl.IntSliceVar(&sizes, "sizes", cfg.Sizes, "record value sizes, bytes")
	fl.StringVar(&acks, "acks", "all,1", "acks settings: all, 1")
	fl.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long each case produces")
	fl.Int64Var(&cfg.CatchUpBytes, "catch-up-bytes", cfg.CatchUpBytes, "bytes a stopped follower catches up on (0 skips the catch-up)")
	fl.StringArrayVar(&set, "set", nil, "override a timing key, as kraftlab up --set (repeatable)")
	fl.StringVar(&cfg.Dir, "dir", "", "data folder (default: a fresh temporary folder, removed afterwards)")
	profiles := flag.NewFlagSet("profiles", flag.ContinueOnError)
	benchkit.RegisterProfileFlags(profiles, &cfg.Profiles, "the produce cases")
	fl.AddGoFlagSet(profiles)
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if quick {
			q := benchkit.QuickProduceConfig()
			keep := func(name string, quickValue func()) {
				if !fl.Changed(name) {
					quickValue()
				}
			}
			keep("profile", func() { profile = q.Profile })
			keep("sizes", func() { sizes = q.Sizes })
			keep("duration", func() { cfg.Duration = q.Duration })
			keep("catch-up-bytes", func() { cfg.CatchUpBytes = q.CatchUpBytes })
		}
		t, err := cluster.ProfileSettings(cluster.ProfileName(profile))
		if err != nil {
			return usagef("--profile: %v", err)
		}
		if err := t.Apply(set); err != nil {
			return usagef("%v", err)
		}
		cfg.Profile, cfg.Settings, cfg.Sizes = profile, t, sizes
		cfg.Acks = nil
		for _, a := range strings.Split(acks, ",") {
			v, err := benchkit.ParseAcks(strings.TrimSpace(a))
			if err != nil {
				return usagef("--acks: %v", err)
			}
			cfg.Acks = append(cfg.Acks, v)
		}
		if err := cfg.Validate(); err != nil {
			return usagef("%v", err)
		}
		rep, runErr := benchkit.RunProduce(cmd.Context(), cfg, cmd.ErrOrStderr())
		if wantJSON(cmd) {
			err = printJSON(cmd.OutOrStdout(), rep)
		} else {
			err = benchkit.WriteProduceTable(cmd.OutOrStdout(), cfg, rep)
		}
		if runErr != nil {
			return failedf("bench produce: %w", runErr)
		}
		return err
	}
	return cmd
}

// runBenchModes runs bench quorum's push-versus-pull table.
func runBenchModes(e *env, cmd *cobra.Command, f *benchkit.Flags, quorumModes, observers string) error {
	modes, obs, err := benchkit.ParseModes(quorumModes, observers)
	if err != nil {
		return usagef("%v", err)
	}
	var sizes []int
	if !cmd.Flags().Changed("sizes") {
		sizes = []int{256}
	}
	cfg, err := f.Modes(modes, obs, sizes)
	if err != nil {
		return usagef("%v", err)
	}
	progress := cmd.ErrOrStderr()
	if e.scenario {
		// A scenario line shows what it printed in a pane: the table,
		// not a line per case that scrolls it away.
		progress = io.Discard
	}
	rs, runErr := benchkit.RunModes(cmd.Context(), cfg, progress)
	if f.JSON {
		err = printJSON(cmd.OutOrStdout(), rs)
	} else {
		err = benchkit.WriteModesTable(cmd.OutOrStdout(), rs)
	}
	if runErr != nil {
		return failedf("bench quorum: %w", runErr)
	}
	return err
}

// runControllerFailoverBench is bench failover --mode.
func runControllerFailoverBench(cmd *cobra.Command, modes string, partitions []int, rounds int, profiles string, set []string, dir, plot string) error {
	plan := benchkit.ControllerFailoverPlan{Partitions: partitions, Rounds: rounds, Dir: dir, Profile: string(cluster.ProfileKafka)}
	for _, m := range strings.Split(modes, ",") {
		mode := benchkit.Mode(strings.TrimSpace(m))
		if mode != benchkit.ModeZK && mode != benchkit.ModeKRaft {
			return usagef("--mode: %q is not zk or kraft", m)
		}
		plan.Modes = append(plan.Modes, mode)
	}
	if cmd.Flags().Changed("profiles") {
		if strings.Contains(profiles, ",") {
			return usagef("--profiles: --mode runs on one profile, got %q", profiles)
		}
		plan.Profile = strings.TrimSpace(profiles)
	}
	t, err := cluster.ProfileSettings(cluster.ProfileName(plan.Profile))
	if err != nil {
		return usagef("--profiles: %v", err)
	}
	if err := t.Apply(set); err != nil {
		return usagef("%v", err)
	}
	plan.Settings = t
	if plan.Rounds == 0 {
		plan.Rounds = 1
	}
	if plan.Rounds < 0 {
		return usagef("--rounds: %d is negative", rounds)
	}
	for _, n := range partitions {
		if n < 1 || n > 1_000_000 {
			return usagef("--partitions: %d must be between 1 and 1,000,000", n)
		}
	}
	rs, runErr := benchkit.RunControllerFailovers(cmd.Context(), plan, cmd.ErrOrStderr())
	if wantJSON(cmd) {
		err = printJSON(cmd.OutOrStdout(), rs)
	} else {
		err = benchkit.WriteControllerFailoverTable(cmd.OutOrStdout(), rs)
	}
	if runErr != nil {
		return failedf("bench failover: %w", runErr)
	}
	if plot != "" {
		f, ferr := os.Create(plot)
		if ferr != nil {
			return failedf("--plot: %w", ferr)
		}
		defer f.Close()
		if perr := benchkit.WriteControllerFailoverPlot(f, rs); perr != nil {
			return failedf("--plot: %w", perr)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", plot)
	}
	return err
}
