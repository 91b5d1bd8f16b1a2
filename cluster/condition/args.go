package condition

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// An arg is a word of a form after its first: how Forms and errors name
// it, how it reads into a Condition and how a Condition spells it.
type arg struct {
	help, usage string   // its name in Forms and in errors: T-P and TOPIC-P; a keyword's is itself
	keyword     bool     // the word itself, as "on" in topic T on all brokers
	optional    bool     // may be left out; keywords come before it
	spelled     bool     // Forms and errors write each of values instead of the name: leader == N | leader != N
	values      []string // the words it takes, when they are few: errors list them
	parse       func(c *Condition, s string) error
	spell       func(c Condition) string // "" for an optional word left out
}

// choice returns the one of a's values that s is, in a's spelling.
func (a arg) choice(s string) (string, bool) {
	i := slices.IndexFunc(a.values, func(v string) bool { return strings.EqualFold(v, s) })
	if i < 0 {
		return "", false
	}
	return a.values[i], true
}

func keyword(w string) arg {
	return arg{help: w, usage: w, keyword: true, spell: func(Condition) string { return w }}
}

// nodeArg is a node reference read by parse: NODE, BROKER or the N of
// leader == N.
func nodeArg(help, usage string, parse func(string) (NodeRef, error)) arg {
	return arg{help: help, usage: usage,
		parse: func(c *Condition, s string) (err error) { c.node, err = parse(s); return err },
		spell: func(c Condition) string { return c.node.String() }}
}

// enumArg is one of a closed set of words, like a role; what names the
// set in errors, want says what else the position takes.
func enumArg(what, name, want string, values []string) arg {
	a := arg{help: name, usage: name, values: values, spell: func(c Condition) string { return c.field }}
	a.parse = func(c *Condition, s string) error {
		v, ok := a.choice(s)
		if !ok {
			return fmt.Errorf("unknown %s %q; want %s%s", what, s, want, strings.Join(values, ", "))
		}
		c.field = v
		return nil
	}
	return a
}

// opArg is a comparison operator out of allowed, or of them all.
func opArg(allowed ...op) arg {
	a := arg{help: "OP", usage: "OP", spell: func(c Condition) string { return string(c.op) }}
	if allowed != nil {
		a.values = make([]string, len(allowed))
		for i, o := range allowed {
			a.values[i] = string(o)
		}
	}
	a.parse = func(c *Condition, s string) (err error) { c.op, err = parseOp(s, allowed...); return err }
	return a
}

// valueArg is V, read by parse.
func valueArg(parse func(c *Condition, s string) (operand, error)) arg {
	return arg{help: "V", usage: "V",
		parse: func(c *Condition, s string) (err error) { c.value, err = parse(c, s); return err },
		spell: func(c Condition) string { return c.value.String() }}
}

// The arguments of the forms.
var (
	topicPartition = arg{help: "T-P", usage: "TOPIC-P",
		parse: func(c *Condition, s string) (err error) { c.tp, err = view.ParseTopicPartition(s); return err },
		spell: func(c Condition) string { return c.tp.String() }}
	topicName = arg{help: "T", usage: "T",
		parse: func(c *Condition, s string) error { c.field = s; return nil },
		spell: func(c Condition) string { return c.field }}

	anyNode      = nodeArg("NODE", "NODE", ParseNodeRef)
	broker       = nodeArg("N", "BROKER", ParseBrokerRef)
	comparedNode = nodeArg("N", "N", parseNodeOperand)

	anyOp  = opArg()
	eqOrNe = opArg(opEq, opNe)
	// isOrNot is the == or != of leader == N.
	isOrNot = func() arg { a := opArg(opEq, opNe); a.spelled = true; return a }()
	// notEq is the [!=] of node NODE role [!=] ROLE; == is no word.
	notEq = arg{help: "[!=]", usage: "[!=]", optional: true,
		parse: func(c *Condition, s string) error {
			o, err := parseOp(s, opEq, opNe)
			if o == opNe {
				c.op = o
			}
			return err
		},
		spell: func(c Condition) string {
			if c.op == opNe {
				return string(opNe)
			}
			return ""
		}}

	role        = enumArg("role", "ROLE", "one of ", view.Names(view.Roles()))
	state       = enumArg("state", "STATE", "one of ", view.Names(view.States()))
	brokerState = enumArg("broker state", "STATE", "one of ", view.Names(view.BrokerStates()))
	field       = enumArg("node field", "FIELD", "role, state or one of ", fieldNames())

	// number is a count or an offset; the baseline has none to add to.
	number = valueArg(func(_ *Condition, s string) (operand, error) { return parseOperand(s, false) })
	// numberOrBaseline is V of epoch and hwm, which the baseline records.
	numberOrBaseline = valueArg(func(_ *Condition, s string) (operand, error) { return parseOperand(s, true) })
	// fieldValue is V of node NODE FIELD OP V: a baseline only for the
	// fields it records.
	fieldValue = valueArg(func(c *Condition, s string) (operand, error) {
		return parseOperand(s, fieldNamed(c.field).baseline != nil)
	})
	// offset is V of a partition's offsets: a number, since the baseline
	// records the metadata log's high watermark, not a partition's.
	offset = valueArg(func(_ *Condition, s string) (operand, error) {
		if strings.HasPrefix(strings.ToLower(s), "baseline") {
			return operand{}, fmt.Errorf("bad value %q: baseline is the metadata log's high watermark; a partition's offsets compare with a number", s)
		}
		return parseOperand(s, false)
	})
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

func parseOp(s string, allowed ...op) (op, error) {
	if s == "=" {
		s = "=="
	}
	if len(allowed) == 0 {
		allowed = []op{opEq, opNe, opGt, opGe, opLt, opLe}
	}
	if slices.Contains(allowed, op(s)) {
		return op(s), nil
	}
	names := make([]string, len(allowed))
	for i, o := range allowed {
		names[i] = string(o)
	}
	hint := ""
	if near, ok := opTypos[s]; ok && slices.Contains(allowed, near) {
		hint = fmt.Sprintf(" (did you mean %s?)", near)
	}
	return "", fmt.Errorf("bad operator %q: want one of %s%s", s, strings.Join(names, " "), hint)
}

// opTypos are operators as they get mistyped, and what they mean.
var opTypos = map[string]op{
	"=>": opGe, "=<": opLe, ">>": opGt, "<<": opLt, "===": opEq, "=!": opNe, "<>": opNe, "!==": opNe,
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
