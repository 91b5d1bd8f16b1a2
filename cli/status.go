package cli

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster/view"
)

func newStatusCommand(e *env) *cobra.Command {
	var replication bool
	cmd := &cobra.Command{
		Use:   "status [--replication]",
		Short: "Show the metadata quorum, as kafka-metadata-quorum describe does",
		Long: `Status prints what "kafka-metadata-quorum describe --status" prints for the
playground: the leader, its epoch, the high watermark and how far the
followers lag. --replication prints one row per replica instead, as
"describe --replication" does, with kraftlab's own State column (running,
killed, stopped, isolated). In a dynamic quorum (kraft.version 1, the
default) a voter's DirectoryId is the one the voter set names for it, a
controller observer's the one its fetches carry: a wiped voter shows up
twice, as the voter its old folder was and as an observer with its new
one. A static quorum's replicas (up --set kraft.version=0) and kraftlab's
brokers, which send none, show the zero UUID (AAAAAAAAAAAAAAAAAAAAAA), as
Kafka prints it for a static quorum's voters. --json prints the whole view
(with --replication: the rows) using the same field names.`,
		Example: indentExample("kraftlab status\nkraftlab status --replication\nkraftlab status --json | jq .leaderId"),
		Args:    nodeArgs(0, 0, "no arguments", "kraftlab status --replication"),
	}
	cmd.Flags().BoolVar(&replication, "replication", false, "one row per replica, as describe --replication")
	addJSONFlag(cmd)
	addAttachFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v, err := fetchView(e, cmd)
		if err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		switch {
		case replication && wantJSON(cmd):
			return printJSON(w, replicaRows(&v))
		case wantJSON(cmd):
			return printJSON(w, v)
		case replication:
			return writeReplication(w, &v)
		}
		if v.ZooKeeper != nil {
			writeZkStatus(w, &v)
			return nil
		}
		writeQuorumStatus(w, &v)
		return nil
	}
	return cmd
}

// writeZkStatus is status in zk mode, which has no metadata quorum: the
// ZooKeeper, the controller among the brokers, its last failover and its
// queues of pushes, in the same key: value columns.
func writeZkStatus(w io.Writer, v *view.View) {
	z := v.ZooKeeper
	row := func(key string, val any) { fmt.Fprintf(w, "%-24s%v\n", key+":", val) }
	row("ClusterId", v.ClusterID)
	row("Mode", "zk (Kafka 3.9's ZooKeeper-era controller; no metadata quorum)")
	row("ZooKeeper", fmt.Sprintf("%s (%s)", z.Addr, z.State))
	if z.Sessions >= 0 {
		row("ZooKeeperHolds", fmt.Sprintf("%d sessions, %d znodes (%d ephemeral), %d watches; %.0f requests/s", z.Sessions, z.Znodes, z.Ephemerals, z.Watches, z.RequestsPerSec))
	}
	if len(z.CutOff) > 0 {
		row("CutOffFromZooKeeper", fmt.Sprint(z.CutOff))
	}
	row("ControllerId", z.ControllerID)
	row("ControllerEpoch", z.ControllerEpoch)
	if f := z.LastFailover; f != nil {
		row("LastFailover", fmt.Sprintf("epoch %d: read %d znodes (%d brokers, %d topics, %d partitions) in %.1f ms; managing %.1f ms after the election",
			f.Epoch, f.Reads, f.Brokers, f.Topics, f.Partitions, f.ReadMs, f.TotalMs))
	}
	for _, c := range z.Channels {
		inFlight := c.InFlight
		if inFlight == "" {
			inFlight = "nothing"
		}
		row(fmt.Sprintf("Pushes to %d", c.Broker), fmt.Sprintf("%d queued, %s in flight; answered %d LeaderAndIsr, %d UpdateMetadata, %d StopReplica (%d bytes)",
			c.Queued, inFlight, c.LeaderAndIsr, c.UpdateMetadata, c.StopReplica, c.Bytes))
	}
	if z.ControllerID == view.NoLeader {
		fmt.Fprintf(w, "\nno controller: the brokers elect one through /controller once ZooKeeper has expired the last one's session\n")
	}
	writeFailures(w, v)
}

// dynamicVoters is a dynamic quorum's voter set as the running node in
// the highest epoch (the leader, when there is one) holds it; nil in a
// static quorum, whose voters are its controllers.
func dynamicVoters(v *view.View) []int32 {
	var set []int32
	epoch := int32(-1)
	for _, n := range v.Nodes {
		if n.Voters != nil && n.Live() && (n.Epoch > epoch || n.ID == v.LeaderID) {
			set, epoch = n.Voters, n.Epoch
			if n.ID == v.LeaderID {
				break
			}
		}
	}
	return set
}

// writeQuorumStatus mirrors kafka-metadata-quorum describe --status: the
// values start at column 25.
func writeQuorumStatus(w io.Writer, v *view.View) {
	row := func(key string, val any) { fmt.Fprintf(w, "%-24s%v\n", key+":", val) }
	row("ClusterId", v.ClusterID)
	row("LeaderId", v.LeaderID)
	row("LeaderEpoch", v.LeaderEpoch)
	row("HighWatermark", v.HighWatermark)
	row("MaxFollowerLag", v.MaxFollowerLag)
	row("MaxFollowerLagTimeMs", v.MaxFollowerLagTimeMs)
	var voters, observers []string
	set := dynamicVoters(v)
	dirs := make(map[int32]string, len(v.CurrentVoters))
	for _, r := range v.CurrentVoters {
		dirs[r.NodeID] = r.DirectoryID
	}
	for _, n := range v.Nodes {
		if set == nil && n.Kind == view.KindController || slices.Contains(set, n.ID) {
			voters = append(voters, quorumNode(n.ID, dirs[n.ID], n.Listener))
		}
	}
	for _, r := range v.CurrentObservers {
		observers = append(observers, quorumNode(r.NodeID, r.DirectoryID, ""))
	}
	row("CurrentVoters", "["+strings.Join(voters, ", ")+"]")
	row("CurrentObservers", "["+strings.Join(observers, ", ")+"]")
	if v.Push() {
		// Not a row of Kafka's: its quorum only pulls.
		row("Replication", "push (classic Raft: the leader sends AppendEntries; Kafka's KRaft pulls)")
	}
	if v.LeaderID == view.NoLeader {
		fmt.Fprintf(w, "\n%s: an election may be in progress\n", v.Summary())
	}
	writeFailures(w, v)
	if lines := loadLines(v); len(lines) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(lines, "\n"))
	}
}

// quorumNode prints a node as Kafka's describe --status does. A voter of
// a dynamic quorum has its directory id from the voter set, an observer
// (a controller) the one its fetches carry; a static quorum's nodes, and
// brokers, have the zero one, which Kafka leaves out (dir "").
func quorumNode(id int32, dir, listener string) string {
	s := fmt.Sprintf(`{"id": %d`, id)
	if dir != "" {
		s += fmt.Sprintf(`, "directoryId": %q`, dir)
	}
	if listener != "" {
		s += fmt.Sprintf(`, "endpoints": ["CONTROLLER://%s"]`, listener)
	}
	return s + "}"
}

// replicaRows lists the replicas as describe --replication does: the
// leader, then the other voters, then the observers.
func replicaRows(v *view.View) []view.Replica {
	return append(append([]view.Replica{}, v.CurrentVoters...), v.CurrentObservers...)
}

// zeroDirectoryID is the DirectoryId printed for a replica without one:
// Kafka's Uuid.ZERO_UUID (22 A's), what describe --replication prints for
// a voter of a static quorum (kraft.version 0). kraftlab's brokers send
// no directory id, so they show it too.
const zeroDirectoryID = "AAAAAAAAAAAAAAAAAAAAAA"

func writeReplication(w io.Writer, v *view.View) error {
	if v.LeaderID == view.NoLeader {
		fmt.Fprintf(w, "%s: only a leader knows how far the replicas are\n", v.Summary())
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NodeId\tDirectoryId\tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus\tState")
	for _, r := range replicaRows(v) {
		dir := r.DirectoryID
		if dir == "" {
			dir = zeroDirectoryID
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", r.NodeID, dir, r.LogEndOffset, r.Lag,
			ago(r.LastFetchTimestamp, v.Timestamp), ago(r.LastCaughtUpTimestamp, v.Timestamp), r.Status, stateOf(v, r.NodeID, r.State))
	}
	return tw.Flush()
}

// statePartitioned is what the tables print for a running node some of
// whose links are cut; wait and expect still read it as running.
const statePartitioned = "partitioned"

// stateOf is a node's state as the tables print it: a running node with
// a cut link is partitioned.
func stateOf(v *view.View, id int32, s view.State) string {
	if n, ok := v.Node(id); ok && v.Partitioned(n) {
		return statePartitioned
	}
	return string(s)
}

// diskMark marks in a table the state of a node whose disk is slow.
func diskMark(n *view.Node) string {
	if n.DiskDelayMs <= 0 {
		return ""
	}
	return fmt.Sprintf(" (disk +%v)", time.Duration(n.DiskDelayMs)*time.Millisecond)
}

func newNodesCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nodes",
		Short: "List every node: its kind, listener, state and role",
		Long: `Nodes lists every node as it sees itself: kind (controller or broker), the
address it listens on, its state (running, killed, stopped, isolated or
failed; partitioned is a running node with some of its links cut, which
wait and expect read as running), its quorum role and epoch, the leader it
follows, whom it voted for, and its log: log end offset, high watermark,
log start offset and latest snapshot (end offset @ epoch). Below the
table: which links a partitioned node lost, which node's disk is slow
("disk +100ms" after its state: kraftlab disk), why a failed node failed,
and the news a node refused because it would break Raft's safety.`,
		Example: indentExample("kraftlab nodes\nkraftlab nodes --json"),
		Args:    nodeArgs(0, 0, "no arguments", "kraftlab nodes"),
	}
	addJSONFlag(cmd)
	addAttachFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v, err := fetchView(e, cmd)
		if err != nil {
			return err
		}
		if wantJSON(cmd) {
			return printJSON(cmd.OutOrStdout(), v.Nodes)
		}
		return writeNodes(cmd.OutOrStdout(), &v)
	}
	return cmd
}

func writeNodes(w io.Writer, v *view.View) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tKIND\tLISTENER\tSTATE\tROLE\tEPOCH\tLEADER\tVOTED\tLOG-END\tHWM\tLOG-START\tSNAPSHOT")
	for _, n := range v.Nodes {
		role := n.Role
		if role == "" {
			role = "-"
		}
		snap := "-"
		if n.LatestSnapshot != nil {
			snap = fmt.Sprintf("%d@%d", n.LatestSnapshot.EndOffset, n.LatestSnapshot.Epoch)
		}
		num := func(x int64) string { return fmt.Sprint(x) }
		if v.Attached != nil {
			num = int64OrDash // unknown, not on the wire
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.ID, n.Kind, orDash(n.Listener), stateOf(v, n.ID, n.State)+diskMark(&n), role,
			num(int64(n.Epoch)), idOrDash(n.LeaderID), idOrDash(n.VotedID), num(n.LogEndOffset), num(n.HighWatermark), num(n.LogStartOffset), snap)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if note := attachedNote(v); note != "" {
		fmt.Fprintf(w, "%s; a follower's own epoch, vote and log start are not on the wire\n", note)
	}
	writeFailures(w, v)
	return nil
}

// writeFailures says why each failed node failed, and what each node
// refused for safety.
func writeFailures(w io.Writer, v *view.View) {
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if v.Partitioned(n) {
			fmt.Fprintf(w, "node %d is partitioned: %s (undo: %s heal %d)\n", n.ID, cutsText(v, n.ID), self, n.ID)
		}
		if n.DiskDelayMs > 0 {
			fmt.Fprintf(w, "node %d's disk is slow: every write and fsync takes %v longer (undo: %s disk %d --delay 0)\n", n.ID, time.Duration(n.DiskDelayMs)*time.Millisecond, self, n.ID)
		}
		if n.State == view.StateFailed {
			fmt.Fprintf(w, "node %d failed: %s\n", n.ID, n.Error)
		}
		if r := n.Restart; r != nil {
			fmt.Fprintf(w, "  it starts again by itself once its folder takes writes: %s\n", restartText(r))
		}
		if n.SnapshotError != "" {
			fmt.Fprintf(w, "node %d could not write a snapshot: %s; it runs on from its log\n", n.ID, n.SnapshotError)
		}
		if s := n.Strangers; s != nil {
			fmt.Fprintf(w, "node %d refused strangers: %s\n", n.ID, strangerText(s))
		}
		if r := n.Refusals; r != nil {
			fmt.Fprintf(w, "node %d refused news that would break Raft's safety %s; the latest: %s\n", n.ID, times(r.Count), r.Last)
			if r.KafkaStops {
				fmt.Fprintf(w, "  Kafka's raft client would have stopped there; if it goes on refusing, node %d cannot go on safely: kraftlab wipe %d (it fetches everything again) or restart it from a copy of a healthy voter's folder\n", n.ID, n.ID)
			}
		}
	}
}

// cutsText says which peers a node has lost, and in which direction.
func cutsText(v *view.View, id int32) string {
	both, out, in := v.LinkCuts(id)
	var parts []string
	if len(both) > 0 {
		parts = append(parts, "cut off from "+joinIDs(both))
	}
	if len(out) > 0 {
		parts = append(parts, "what it sends "+joinIDs(out)+" is dropped")
	}
	if len(in) > 0 {
		parts = append(parts, "what "+joinIDs(in)+" sends it is dropped")
	}
	return strings.Join(parts, "; ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func idOrDash(id int32) string {
	if id < 0 {
		return "-"
	}
	return fmt.Sprint(id)
}

// agoMagnitudes are go-humanize's relative times with milliseconds below a
// second: quorum timestamps are milliseconds apart.
var agoMagnitudes = []humanize.RelTimeMagnitude{
	{D: time.Millisecond, Format: "now", DivBy: 1},
	{D: time.Second, Format: "%d ms %s", DivBy: time.Millisecond},
	{D: 2 * time.Second, Format: "1 second %s", DivBy: 1},
	{D: time.Minute, Format: "%d seconds %s", DivBy: time.Second},
	{D: 2 * time.Minute, Format: "1 minute %s", DivBy: 1},
	{D: time.Hour, Format: "%d minutes %s", DivBy: time.Minute},
	{D: 2 * time.Hour, Format: "1 hour %s", DivBy: 1},
	{D: humanize.Day, Format: "%d hours %s", DivBy: time.Hour},
	{D: math.MaxInt64, Format: "a long while %s", DivBy: 1},
}

// ago prints a Unix-millisecond timestamp relative to now; -1 is never.
func ago(ts, now int64) string {
	if ts < 0 {
		return "never"
	}
	return humanize.CustomRelTime(time.UnixMilli(ts), time.UnixMilli(now), "ago", "from now", agoMagnitudes)
}

// times spells a count of occurrences.
func times(n int64) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// strangerText says what a node refused to clients that are not members.
func strangerText(s *view.Strangers) string {
	var parts []string
	if s.AuthFailures > 0 {
		parts = append(parts, plural(s.AuthFailures, "failed authentication"))
	}
	names := make([]string, 0, len(s.Unauthorized))
	for name := range s.Unauthorized {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		parts = append(parts, plural(s.Unauthorized[name], name+" request")+" from unauthenticated clients (CLUSTER_AUTHORIZATION_FAILED)")
	}
	return strings.Join(parts, "; ")
}

// plural spells a count of things: "1 Fetch request", "3 Fetch requests".
func plural(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// restartText says what a node's own restarts are doing.
func restartText(r *view.Restart) string {
	if r.Attempts == 0 {
		return "first probe of its folder due"
	}
	return fmt.Sprintf("%s refused, the last: %s", plural(int64(r.Attempts), "probe"), r.LastError)
}
