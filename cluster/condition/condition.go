package condition

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/closest"
)

// Forms lists the conditions wait and expect understand, one per
// line, for help texts and parse errors.
const Forms = `  leader                         a leader is known
  leader == N | leader != N      a leader is known and it is (not) node N
  new-leader                     a leader in an epoch above the baseline's (see below)
  epoch OP V                     the leader's epoch compared with V
  hwm OP V                       the metadata log leader's high watermark compared with V
  caught-up                      every running voter and broker is at the leader's log end offset
                                 and every unfenced broker has applied all committed metadata
  node NODE role [!=] ROLE       ROLE: Leader Follower Candidate Prospective Unattached Resigned Observer
  node NODE state [!=] STATE     STATE: running killed stopped isolated failed
  node NODE FIELD OP V           FIELD: epoch log-end hwm log-start lag truncations snapshots-loaded
` + metadataForms + `
` + dataPlaneForms + `
OP is one of == != > >= < <=. NODE is a node ID, leader, follower,
old-leader, target, leader-of:T-P or follower-of:T-P; N and BROKER a
broker's ID, leader-of:T-P or follower-of:T-P. V is a number, or for
epoch, hwm OP V and node NODE hwm/log-end "baseline" or "baseline+K": the leader's epoch (for epoch) or high watermark
(for hwm and log-end) just before the last kill, stop, isolate, resign or
wipe. old-leader is the leader then, target the node it acted on, follower
the running follower of the current leader with the lowest ID (a wait
waits for one); leader-of:T-P is the broker leading partition T-P,
follower-of:T-P its in-sync follower with the lowest ID (while it has no
leader, its replica with the lowest ID outside the ISR).`

type condKind int

const (
	condLeader condKind = iota
	condLeaderIs
	condNewLeader
	condEpoch
	condHWM
	condCaughtUp
	condNodeRole
	condNodeState
	condNodeField
)

type op string

const (
	opEq op = "=="
	opNe op = "!="
	opGt op = ">"
	opGe op = ">="
	opLt op = "<"
	opLe op = "<="
)

func (o op) holds(a, b int64) bool {
	switch o {
	case opEq:
		return a == b
	case opNe:
		return a != b
	case opGt:
		return a > b
	case opGe:
		return a >= b
	case opLt:
		return a < b
	}
	return a <= b
}

// operand is a number, or the baseline's value plus a number.
type operand struct {
	baseline bool
	n        int64
}

func (o operand) String() string {
	switch {
	case !o.baseline:
		return strconv.FormatInt(o.n, 10)
	case o.n > 0:
		return fmt.Sprintf("baseline+%d", o.n)
	case o.n < 0:
		return fmt.Sprintf("baseline%d", o.n)
	}
	return "baseline"
}

// Node fields a condition can compare.
var nodeFields = []string{"epoch", "log-end", "hwm", "log-start", "lag", "truncations", "snapshots-loaded"}

// Condition is a parsed wait/expect condition. Evaluating it is a pure
// function of a view.View.
type Condition struct {
	kind  condKind
	node  NodeRef // node, leader ==
	op    op
	value operand
	field string // node FIELD, the role/state word, or a topic
	tp    view.TopicPartition
}

// Parse parses a condition; the words may come as one string or
// as shell arguments joined by spaces. Operators need no spaces around them.
func Parse(text string) (Condition, error) {
	toks := lexCondition(text)
	c, err := parseTokens(toks)
	if err != nil {
		return Condition{}, fmt.Errorf("bad condition %q: %v; closest form: %s", strings.Join(toks, " "), err, closestForm(toks))
	}
	return c, nil
}

// lexCondition splits on spaces and around comparison operators.
func lexCondition(s string) []string {
	var toks []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			flush()
		case strings.IndexByte("=!<>", ch) >= 0:
			flush()
			if i+1 < len(s) && s[i+1] == '=' {
				toks = append(toks, s[i:i+2])
				i++
			} else {
				toks = append(toks, s[i:i+1])
			}
		default:
			cur.WriteByte(ch)
		}
	}
	flush()
	return toks
}

func parseTokens(t []string) (Condition, error) {
	if len(t) == 0 {
		return Condition{}, errors.New("empty condition")
	}
	word := strings.ToLower(t[0])
	if c, ok, err := parseDataPlaneCondition(word, t); ok {
		return c, err
	}
	switch word {
	case "leader":
		if len(t) == 1 {
			return Condition{kind: condLeader}, nil
		}
		if len(t) != 3 {
			return Condition{}, errors.New("want leader, leader == N or leader != N")
		}
		o, err := parseOp(t[1], opEq, opNe)
		if err != nil {
			return Condition{}, err
		}
		ref, err := parseNodeOperand(t[2])
		return Condition{kind: condLeaderIs, op: o, node: ref}, err
	case "new-leader", "caught-up":
		if len(t) != 1 {
			return Condition{}, fmt.Errorf("%s takes no arguments", word)
		}
		if word == "new-leader" {
			return Condition{kind: condNewLeader}, nil
		}
		return Condition{kind: condCaughtUp}, nil
	case "epoch", "hwm":
		if len(t) != 3 {
			if word == "hwm" {
				return Condition{}, errors.New("want hwm OP V (the metadata log's) or hwm TOPIC-P OP V (a partition's), e.g. hwm > 3")
			}
			return Condition{}, fmt.Errorf("want %s OP V, e.g. %s > 3", word, word)
		}
		o, err := parseOp(t[1])
		if err != nil {
			return Condition{}, err
		}
		v, err := parseOperand(t[2], true)
		if err != nil {
			return Condition{}, err
		}
		k := condEpoch
		if word == "hwm" {
			k = condHWM
		}
		return Condition{kind: k, op: o, value: v}, nil
	case "node":
		return parseNodeCondition(t)
	}
	if c, ok, err := parseMetadataCondition(word, t); ok {
		return c, err
	}
	return Condition{}, fmt.Errorf("unknown condition %q", t[0])
}

func parseNodeCondition(t []string) (Condition, error) {
	if len(t) < 4 {
		return Condition{}, errors.New("want node NODE role ROLE, node NODE state STATE or node NODE FIELD OP V")
	}
	ref, err := ParseNodeRef(t[1])
	if err != nil {
		return Condition{}, err
	}
	what := strings.ToLower(t[2])
	switch what {
	case "role", "state":
		o, word := opEq, t[3:]
		if len(word) == 2 {
			var err error
			if o, err = parseOp(word[0], opEq, opNe); err != nil {
				return Condition{}, err
			}
			word = word[1:]
		}
		if len(word) != 1 {
			return Condition{}, fmt.Errorf("want node NODE %s [!=] WORD", what)
		}
		list, kind := view.Names(view.Roles()), condNodeRole
		if what == "state" {
			list, kind = view.Names(view.States()), condNodeState
		}
		i := slices.IndexFunc(list, func(s string) bool { return strings.EqualFold(s, word[0]) })
		if i < 0 {
			return Condition{}, fmt.Errorf("unknown %s %q; want one of %s", what, word[0], strings.Join(list, ", "))
		}
		return Condition{kind: kind, node: ref, op: o, field: list[i]}, nil
	}
	if !slices.Contains(nodeFields, what) {
		return Condition{}, fmt.Errorf("unknown node field %q; want role, state or one of %s", t[2], strings.Join(nodeFields, ", "))
	}
	if len(t) != 5 {
		return Condition{}, fmt.Errorf("want node NODE %s OP V", what)
	}
	o, err := parseOp(t[3])
	if err != nil {
		return Condition{}, err
	}
	v, err := parseOperand(t[4], what == "epoch" || what == "hwm" || what == "log-end")
	return Condition{kind: condNodeField, node: ref, field: what, op: o, value: v}, err
}

func parseOp(s string, allowed ...op) (op, error) {
	if s == "=" {
		s = "=="
	}
	all := []op{opEq, opNe, opGt, opGe, opLt, opLe}
	if len(allowed) == 0 {
		allowed = all
	}
	if slices.Contains(allowed, op(s)) {
		return op(s), nil
	}
	names := make([]string, len(allowed))
	for i, o := range allowed {
		names[i] = string(o)
	}
	return "", fmt.Errorf("bad operator %q: want one of %s", s, strings.Join(names, " "))
}

func parseOperand(s string, baselineOK bool) (operand, error) {
	if rest, ok := strings.CutPrefix(strings.ToLower(s), "baseline"); ok {
		if !baselineOK {
			return operand{}, errors.New("baseline only compares with epoch, hwm and log-end")
		}
		if rest == "" {
			return operand{baseline: true}, nil
		}
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || (rest[0] != '+' && rest[0] != '-') {
			return operand{}, fmt.Errorf("bad value %q: want baseline, baseline+K or baseline-K", s)
		}
		return operand{baseline: true, n: n}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if baselineOK {
			return operand{}, fmt.Errorf("bad value %q: want a number, baseline or baseline+K", s)
		}
		return operand{}, fmt.Errorf("bad value %q: want a number", s)
	}
	return operand{n: n}, nil
}

// parseNodeOperand parses the N of leader == N: a node ID, old-leader or
// target.
func parseNodeOperand(s string) (NodeRef, error) {
	ref, err := ParseNodeRef(s)
	if err == nil && (ref.IsLeader() || ref.IsFollower()) {
		err = fmt.Errorf("compare with a node ID, old-leader or target, not %s", ref)
	}
	return ref, err
}

// Nodes returns the node references the condition names, for checking
// them before it runs.
func (c Condition) Nodes() []NodeRef {
	if c.node.IsZero() {
		return nil
	}
	return []NodeRef{c.node}
}

// String returns the condition in its canonical spelling.
func (c Condition) String() string {
	if s, ok := c.metadataString(); ok {
		return s
	}
	if s, ok := c.dataPlaneString(); ok {
		return s
	}
	switch c.kind {
	case condLeader:
		return "leader"
	case condLeaderIs:
		return fmt.Sprintf("leader %s %s", c.op, c.node)
	case condNewLeader:
		return "new-leader"
	case condEpoch:
		return fmt.Sprintf("epoch %s %s", c.op, c.value)
	case condHWM:
		return fmt.Sprintf("hwm %s %s", c.op, c.value)
	case condCaughtUp:
		return "caught-up"
	case condNodeRole, condNodeState:
		what, op := "role", ""
		if c.kind == condNodeState {
			what = "state"
		}
		if c.op == opNe {
			op = " !="
		}
		return fmt.Sprintf("node %s %s%s %s", c.node, what, op, c.field)
	}
	return fmt.Sprintf("node %s %s %s %s", c.node, c.field, c.op, c.value)
}

// Eval evaluates the condition against v. ok tells whether it holds; saw
// says what it looked at, for progress and failure messages. err is set
// when the condition cannot be evaluated at all (an unknown node, no
// baseline yet): waiting longer would not help.
func (c Condition) Eval(v *view.View) (ok bool, saw string, err error) {
	if holds, saw, err, ok := c.evalMetadata(v); ok {
		return holds, saw, err
	}
	if holds, saw, err, ok := c.evalDataPlane(v); ok {
		return holds, saw, err
	}
	switch c.kind {
	case condLeader:
		return v.LeaderID != view.NoLeader, v.Summary(), nil
	case condLeaderIs:
		id, err := c.node.Resolve(v)
		if err != nil {
			return false, "", err
		}
		return v.LeaderID != view.NoLeader && c.op.holds(int64(v.LeaderID), int64(id)), v.Summary(), nil
	case condNewLeader:
		if v.Baseline == nil {
			return false, "", fmt.Errorf("%w: new-leader compares with the epoch before the last kill, stop, isolate or resign", ErrNoBaseline)
		}
		saw := fmt.Sprintf("%s; baseline epoch %d (before %s of node %d)", v.Summary(), v.Baseline.LeaderEpoch, v.Baseline.Action, v.Baseline.NodeID)
		return v.LeaderID != view.NoLeader && v.LeaderEpoch > v.Baseline.LeaderEpoch, saw, nil
	case condEpoch, condHWM:
		if v.LeaderID == view.NoLeader {
			return false, v.Summary(), nil
		}
		name, have := "epoch", int64(v.LeaderEpoch)
		if c.kind == condHWM {
			name, have = "hwm", v.HighWatermark
		}
		want, err := c.resolve(v, name)
		if err != nil {
			return false, "", err
		}
		return c.op.holds(have, want), fmt.Sprintf("%s %d (want %s %d); %s", name, have, c.op, want, v.Summary()), nil
	case condCaughtUp:
		return caughtUp(v)
	case condNodeRole, condNodeState, condNodeField:
		return c.evalNode(v)
	}
	return false, "", fmt.Errorf("condition %v: unknown kind", c)
}

// resolve returns the operand's value; name says which baseline value.
func (c Condition) resolve(v *view.View, name string) (int64, error) {
	if !c.value.baseline {
		return c.value.n, nil
	}
	if v.Baseline == nil {
		return 0, fmt.Errorf("%w: baseline is recorded by kill, stop, isolate or resign", ErrNoBaseline)
	}
	base := int64(v.Baseline.LeaderEpoch)
	if name != "epoch" {
		base = v.Baseline.HighWatermark // hwm and log-end compare with what was committed
	}
	return base + c.value.n, nil
}

func (c Condition) evalNode(v *view.View) (bool, string, error) {
	id, err := c.node.Resolve(v)
	if errors.Is(err, ErrNoLeader) && c.node.IsLeader() {
		return false, v.Summary(), nil
	}
	if (errors.Is(err, ErrNoLeader) || errors.Is(err, ErrNoFollower)) && c.node.IsFollower() {
		return false, fmt.Sprintf("no follower yet: %s", v.Summary()), nil // a wait waits for one
	}
	if err != nil {
		return false, "", err
	}
	n, _ := v.Node(id)
	saw := n.Summary()
	switch c.kind {
	case condNodeRole:
		return (string(n.Role) == c.field) == (c.op != opNe), saw, nil
	case condNodeState:
		return (string(n.State) == c.field) == (c.op != opNe), saw, nil
	}
	var have int64
	switch c.field {
	case "epoch":
		have = int64(n.Epoch)
	case "log-end":
		have = n.LogEndOffset
	case "hwm":
		have = n.HighWatermark
	case "log-start":
		have = n.LogStartOffset
	case "truncations":
		have = n.Truncations
	case "snapshots-loaded":
		have = n.SnapshotsLoaded
	case "lag":
		r, ok := v.Replica(id)
		if !ok {
			return false, fmt.Sprintf("node %d has no lag: %s", id, v.Summary()), nil
		}
		have = r.Lag
	}
	want, err := c.resolve(v, c.field)
	if err != nil {
		return false, "", err
	}
	return c.op.holds(have, want), fmt.Sprintf("node %d %s %d (want %s %d); %s", id, c.field, have, c.op, want, saw), nil
}

// caughtUp checks every running voter and broker against the leader's log
// end offset, and every unfenced broker's metadata lag.
func caughtUp(v *view.View) (bool, string, error) {
	leader, ok := v.Leader()
	if !ok {
		return false, v.Summary(), nil
	}
	var behind []string
	voters, brokers := 0, 0
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if n.State != view.StateRunning {
			continue
		}
		if n.Kind == view.KindController {
			voters++
		} else {
			brokers++
		}
		if n.LogEndOffset < leader.LogEndOffset {
			behind = append(behind, fmt.Sprintf("node %d at %d", n.ID, n.LogEndOffset))
		} else if b := n.Broker; b != nil && b.Registered && !b.Fenced && b.MetadataLag != 0 {
			behind = append(behind, fmt.Sprintf("broker %d has not applied %s", n.ID, lagWords(b.MetadataLag)))
		}
	}
	if len(behind) > 0 {
		return false, fmt.Sprintf("leader %d log end %d; behind: %s", leader.ID, leader.LogEndOffset, strings.Join(behind, ", ")), nil
	}
	return true, fmt.Sprintf("%d running voters and %d brokers at leader %d's log end %d", voters, brokers, leader.ID, leader.LogEndOffset), nil
}

// forms is each condition word's form, for parse errors: the one line of
// Forms that the bad condition comes closest to.
var forms = []struct{ word, form string }{
	{"leader", "leader, leader == N or leader != N"},
	{"new-leader", "new-leader"},
	{"epoch", "epoch OP V, e.g. epoch > baseline"},
	{"hwm", "hwm OP V, e.g. hwm >= baseline+5, or hwm TOPIC-P OP V, e.g. hwm orders-0 >= 50"},
	{"caught-up", "caught-up"},
	{"node", "node NODE role ROLE, node NODE state STATE or node NODE FIELD OP V"},
	{"fenced", "fenced NODE"},
	{"unfenced", "unfenced NODE"},
	{"broker", "broker NODE state [!=] STATE"},
	{"metadata-lag", "metadata-lag NODE OP V, e.g. metadata-lag 101 == 0"},
	{"topic", "topic T on all brokers"},
	{"partition-leader", "partition-leader TOPIC-P != N"},
	{"isr", "isr TOPIC-P size >= K"},
	{"log-end", "log-end TOPIC-P BROKER OP V, e.g. log-end orders-0 102 == 50"},
	{"fetcher-lag", "fetcher-lag BROKER OP V, e.g. fetcher-lag 102 == 0"},
	{"in-sync", "in-sync TOPIC-P"},
	{"truncations", "truncations TOPIC-P BROKER OP V, e.g. truncations orders-0 101 >= 1"},
}

// closestForm names the form a bad condition was most likely meant to be:
// the one of its first word, or of the condition word nearest to it.
func closestForm(t []string) string {
	if len(t) == 0 {
		return "leader (every form: the help of wait)"
	}
	word := strings.ToLower(t[0])
	if word == "node" && len(t) >= 3 {
		switch f := strings.ToLower(t[2]); {
		case f == "role":
			return "node NODE role [!=] ROLE, ROLE one of " + strings.Join(view.Names(view.Roles()), " ")
		case f == "state":
			return "node NODE state [!=] STATE, STATE one of " + strings.Join(view.Names(view.States()), " ")
		default:
			return "node NODE FIELD OP V, FIELD one of " + strings.Join(nodeFields, " ")
		}
	}
	best, bestDist := -1, 3 // a word more than 2 edits away is no guess
	for i, f := range forms {
		if d := closest.Distance(word, f.word); d < bestDist {
			best, bestDist = i, d
		}
	}
	if best < 0 {
		words := make([]string, len(forms))
		for i, f := range forms {
			words[i] = f.word
		}
		return "none; a condition starts with one of " + strings.Join(words, ", ")
	}
	return forms[best].form
}
