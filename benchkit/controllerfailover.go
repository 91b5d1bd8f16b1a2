package benchkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/kraftlab/kraftlab/server"
)

// Mode is where a measured cluster's metadata comes from: "kraft" or
// "zk" (the playground's up --mode).
type Mode string

// The modes the controller failover compares.
const (
	ModeKRaft Mode = "kraft"
	ModeZK    Mode = "zk"
)

// ControllerFailoverPlan is what the controller failover comparison
// runs: each mode at each metadata size, Rounds kills of the active
// controller each, on one timing profile.
type ControllerFailoverPlan struct {
	Modes      []Mode
	Partitions []int
	Rounds     int
	Profile    string
	Settings   server.Settings
	// Dir holds the clusters' folders; empty means a fresh temporary one.
	Dir string
}

// ControllerFailover is one mode at one metadata size: the active
// controller killed Rounds times, each time until its successor
// manages the cluster.
type ControllerFailover struct {
	Mode       Mode   `json:"mode"`
	Profile    string `json:"profile"`
	Partitions int    `json:"partitions"`
	Rounds     int    `json:"rounds"`
	// KillToElected: until a successor is chosen. In zk mode ZooKeeper
	// must first expire the dead broker's session; in KRaft mode the
	// voters' fetch timeout passes and they vote.
	KillToElected Spread `json:"killToElected"`
	// ElectedToManaged: until the successor can manage the cluster. In
	// zk mode it reads every broker, topic and partition state out of
	// ZooKeeper and queues its pushes; in KRaft mode it already holds the
	// metadata log and only activates.
	ElectedToManaged Spread `json:"electedToManaged"`
	// ElectedToCreate: until the successor answers its first
	// CreateTopics, the first change it manages.
	ElectedToCreate Spread `json:"electedToCreateTopics"`
	KillToCreate    Spread `json:"killToCreateTopics"`
	// Reads and Pushed are zk mode's last round: the znodes the
	// successor read, and the bytes it pushed to the brokers until its
	// CreateTopics answer. A KRaft successor reads and pushes nothing:
	// the brokers keep fetching the log they had.
	Reads  int   `json:"reads,omitempty"`
	Pushed int64 `json:"pushedBytes,omitempty"`
	// Shutdown is the controlled shutdown of the broker leading the most
	// partitions (not the controller's, in zk mode), after the rounds.
	Shutdown ControlledShutdownSample `json:"controlledShutdown"`
	Error    string                   `json:"error,omitempty"`
}

// RunControllerFailovers runs plan, each mode and size on a cluster of
// its own, saying what it does on progress.
func RunControllerFailovers(ctx context.Context, plan ControllerFailoverPlan, progress io.Writer) ([]ControllerFailover, error) {
	dir, cleanup, err := benchDir(plan.Dir)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	var out []ControllerFailover
	for _, n := range plan.Partitions {
		for _, m := range plan.Modes {
			r := ControllerFailover{Mode: m, Profile: plan.Profile, Partitions: n}
			var err error
			switch m {
			case ModeZK:
				err = runZkRounds(ctx, plan, dir, n, &r, progress)
			case ModeKRaft:
				err = runKRaftRounds(ctx, plan, dir, n, &r, progress)
			default:
				err = fmt.Errorf("unknown mode %q", m)
			}
			if err != nil {
				r.Error = err.Error()
				out = append(out, r)
				return out, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func runZkRounds(ctx context.Context, plan ControllerFailoverPlan, dir string, n int, r *ControllerFailover, progress io.Writer) error {
	ss, sh, err := runZkFailover(ctx, plan.Settings, dir, n, plan.Rounds, progress)
	r.Shutdown = sh
	var elected, managed, create, total []time.Duration
	for _, s := range ss {
		elected, managed = append(elected, s.KillToElected), append(managed, s.ElectedToManaged)
		create, total = append(create, s.ElectedToCreate), append(total, s.KillToElected+s.ElectedToCreate)
		r.Reads, r.Pushed = s.Reads, s.Pushed
	}
	r.Rounds = len(ss)
	r.KillToElected, r.ElectedToManaged, r.ElectedToCreate, r.KillToCreate = SpreadOf(elected), SpreadOf(managed), SpreadOf(create), SpreadOf(total)
	return err
}

func runKRaftRounds(ctx context.Context, plan ControllerFailoverPlan, dir string, n int, r *ControllerFailover, progress io.Writer) error {
	cfg := MetadataConfig{Profile: plan.Profile, Settings: plan.Settings, FailoverBrokers: 3, FailoverRounds: plan.Rounds, FailoverShutdown: true, Dir: dir}
	mf, err := runMetaFailover(ctx, cfg, n, progress)
	var elected []time.Duration
	for _, s := range mf.Samples {
		elected = append(elected, s.KillToElection)
	}
	r.Rounds, r.Shutdown = mf.Rounds, mf.Shutdown
	r.KillToElected, r.ElectedToManaged, r.ElectedToCreate, r.KillToCreate = SpreadOf(elected), mf.ElectionToActive, mf.ElectionToCreate, mf.KillToCreate
	return err
}

// benchDir is dir, or a fresh temporary folder that cleanup removes.
func benchDir(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	d, err := os.MkdirTemp("", "kraftlab-bench-")
	if err != nil {
		return "", nil, fmt.Errorf("data folder: %w", err)
	}
	return d, func() { os.RemoveAll(d) }, nil
}

// PublishedFailoverFigures are the published figures of the same
// contrast, for scale: Confluent's lab of 2 million partitions.
const PublishedFailoverFigures = `Published, for scale (Confluent's lab, 2 million partitions, "A First Glimpse of a Kafka
Without ZooKeeper"): controlled shutdown 135 s with ZooKeeper, 32 s with KRaft;
recovery after an uncontrolled shutdown 503 s with ZooKeeper, 37 s with KRaft.`

// WriteControllerFailoverTable prints rs as a table, p50 of the rounds,
// with the published figures beside.
func WriteControllerFailoverTable(w io.Writer, rs []ControllerFailover) error {
	if len(rs) == 0 {
		return errors.New("no results")
	}
	fmt.Fprintf(w, "Controller failover: the active controller killed, until its successor manages the cluster (profile %s, 3 brokers, p50 of the rounds)\n", rs[0].Profile)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "MODE\tPARTITIONS\tROUNDS\tKILL→ELECTED\tELECTED→MANAGING\tELECTED→CREATETOPICS\tKILL→CREATETOPICS\tZNODES READ\tPUSHED\t")
	for _, r := range rs {
		reads, pushed := "-", "-"
		if r.Mode == ModeZK {
			reads, pushed = fmt.Sprint(r.Reads), fmtBytes(uint64(r.Pushed))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Mode, r.Partitions, r.Rounds,
			fmtDur(r.KillToElected.P50), fmtDur(r.ElectedToManaged.P50), fmtDur(r.ElectedToCreate.P50), fmtDur(r.KillToCreate.P50), reads, pushed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "KILL→ELECTED: zk waits for ZooKeeper to expire the dead broker's session (zookeeper.session.timeout.ms); KRaft for the")
	fmt.Fprintln(w, "voters' fetch timeout and a vote. ELECTED→MANAGING: zk reads every znode and pushes the whole state; KRaft already holds it.")
	fmt.Fprintln(w)
	if err := writeControlledShutdownTable(w, rs); err != nil {
		return err
	}
	fmt.Fprintln(w, PublishedFailoverFigures)
	return nil
}

// writeControlledShutdownTable prints the controlled shutdowns rs hold.
func writeControlledShutdownTable(w io.Writer, rs []ControllerFailover) error {
	var shown bool
	for _, r := range rs {
		shown = shown || r.Shutdown.Took > 0
	}
	if !shown {
		return nil
	}
	fmt.Fprintln(w, "Controlled shutdown: the broker leading the most partitions stops, after the failovers")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "MODE\tPARTITIONS\tBROKER\tLED\tIN ISRS\tPENDING→LET GO\t")
	for _, r := range rs {
		if sh := r.Shutdown; sh.Took > 0 {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t\n", r.Mode, r.Partitions, sh.Broker, sh.Led, sh.InISR, fmtDur(sh.Took))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "PENDING→LET GO: from PENDING_CONTROLLED_SHUTDOWN to SHUTTING_DOWN. zk: one ControlledShutdown, answered once the")
	fmt.Fprintln(w, "controller wrote each changed partition to ZooKeeper, growing with them; KRaft: the moves commit as records, and the")
	fmt.Fprintln(w, "broker goes once every other broker's heartbeat said it applied them (broker.heartbeat.interval.ms, the floor).")
	fmt.Fprintln(w)
	return nil
}
