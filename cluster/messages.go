package cluster

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// The message actions: while the cluster clock is paused, list the
// messages the links hold, deliver them one at a time, or lose one.
const (
	// ActMessages lists the held messages.
	ActMessages ActionKind = "messages"
	// ActStep delivers the oldest held message that matches (Action.API,
	// Node as the sender, Peer as the receiver, Direction, MessageID), and
	// first those held before it on its connection; with Action.All,
	// every one.
	ActStep ActionKind = "step"
	// ActDrop loses the oldest held message that matches, as a lossy link
	// does.
	ActDrop ActionKind = "drop"
)

// controlsTime reports whether k is a time action: the clock and the
// held messages, which let a paused cluster's waiting actions finish.
func (k ActionKind) controlsTime() bool {
	switch k {
	case ActClock, ActMessages, ActStep, ActDrop:
		return true
	}
	return false
}

// EventStep: a held message was stepped or dropped.
const EventStep EventKind = "step"

// AnyNode in a MessageFilter matches every node.
const AnyNode int32 = -1

// MessageFilter picks held messages; its zero values match all but From
// and To, which match all as AnyNode.
type MessageFilter struct {
	// ID, if set, is the one message.
	ID uint64
	// API is Kafka's name of the API (Fetch, Vote, BrokerHeartbeat…),
	// in any case.
	API string
	// From and To are the link: the node that sends and the node that
	// receives (a response goes from the node that answers).
	From, To  int32
	Direction view.MessageDirection
	// All, for step, delivers every held message.
	All bool
}

// Match reports whether m is one the filter picks.
func (f MessageFilter) Match(m view.Message) bool {
	return (f.ID == 0 || m.ID == f.ID) &&
		(f.API == "" || strings.EqualFold(f.API, m.API)) &&
		(f.From == AnyNode || m.From == f.From) &&
		(f.To == AnyNode || m.To == f.To) &&
		(f.Direction == "" || f.Direction == m.Direction)
}

func (f MessageFilter) String() string {
	var s []string
	if f.ID != 0 {
		s = append(s, fmt.Sprintf("--id %d", f.ID))
	}
	if f.API != "" {
		s = append(s, "--api "+f.API)
	}
	if f.From != AnyNode {
		s = append(s, fmt.Sprintf("--from %d", f.From))
	}
	if f.To != AnyNode {
		s = append(s, fmt.Sprintf("--to %d", f.To))
	}
	if f.Direction != "" {
		s = append(s, "--"+string(f.Direction))
	}
	if f.All {
		s = append(s, "--all")
	}
	return strings.Join(s, " ")
}

// ParseMessageDirection reads a held message's direction.
func ParseMessageDirection(s string) (view.MessageDirection, error) {
	switch d := view.MessageDirection(s); d {
	case "", view.MessageRequest, view.MessageResponse:
		return d, nil
	}
	return "", Errorf(ErrBadAction, "direction %q: want request or response", s)
}

func (a Action) messageString() string {
	s := string(a.Kind)
	if a.MessageID != 0 {
		s += fmt.Sprintf(" --id %d", a.MessageID)
	}
	if a.API != "" {
		s += " --api " + a.API
	}
	if !a.Node.IsZero() {
		s += " --from " + a.Node.String()
	}
	if !a.Peer.IsZero() {
		s += " --to " + a.Peer.String()
	}
	if a.Direction != "" {
		s += " --" + string(a.Direction)
	}
	if a.All {
		s += " --all"
	}
	if a.Until != "" {
		s += " --until " + strconv.Quote(a.Until)
	}
	return s
}

func (p *Playground) doMessages(v *view.View, a Action) (Result, error) {
	if a.OneWay || a.Topic != "" || a.Clock != "" {
		return Result{}, Errorf(ErrBadAction, "%s takes --api, --from, --to, --id, --request or --response only", a.Kind)
	}
	if _, err := ParseMessageDirection(string(a.Direction)); err != nil {
		return Result{}, err
	}
	f := MessageFilter{ID: a.MessageID, API: a.API, From: AnyNode, To: AnyNode, Direction: a.Direction, All: a.All}
	for _, r := range []struct {
		ref condition.NodeRef
		id  *int32
	}{{a.Node, &f.From}, {a.Peer, &f.To}} {
		if r.ref.IsZero() {
			continue
		}
		id, err := r.ref.Resolve(v)
		if err != nil {
			return Result{}, err
		}
		*r.id = id
	}
	if a.Kind != ActStep && (a.All || a.Until != "") {
		return Result{}, Errorf(ErrBadAction, "%s takes no --all nor --until", a.Kind)
	}
	if a.All && a.Until != "" {
		return Result{}, Errorf(ErrBadAction, "step takes --all or --until, not both")
	}
	if a.Kind == ActMessages {
		held := p.engine.HeldMessages()
		var out []view.Message
		for _, m := range held {
			if f.Match(m) {
				out = append(out, m)
			}
		}
		return Result{Messages: out, Message: describeMessages(out, len(held), p.paused())}, nil
	}
	if !p.paused() {
		return Result{}, Errorf(ErrBadAction, "%s works only while the cluster clock is paused (kraftlab clock pause first): running, the links let every message go on its own", a.Kind)
	}
	if a.Kind == ActDrop {
		var m view.Message
		err := awaitHeld(func() (err error) { m, err = p.engine.DropMessage(f); return err })
		if err != nil {
			return Result{}, err
		}
		msg := fmt.Sprintf("dropped %s: %s", describeMessage(m), dropConsequence(m))
		p.publish(EventStep, m.From, msg)
		return Result{Messages: []view.Message{m}, Message: msg}, nil
	}
	if a.Until != "" {
		return p.stepUntil(f, a.Until)
	}
	var ms []view.Message
	err := awaitHeld(func() (err error) { ms, err = p.engine.StepMessages(f); return err })
	if err != nil {
		return Result{}, err
	}
	msg := delivered(ms)
	if len(ms) == 0 {
		msg = "no message was held"
	}
	p.publish(EventStep, 0, msg)
	return Result{Messages: ms, Message: msg}, nil
}

// untilWait bounds, in wall time, how long step --until delivers and
// waits for its condition.
const untilWait = 30 * time.Second

// stepUntil delivers the held messages f matches, oldest first, one at a
// time, until the condition holds: after each delivery it looks again, so
// it stops at the first message after which the condition is seen true.
// Nothing held is no failure: the receiver of the last message answers a
// moment later, on its own goroutine.
func (p *Playground) stepUntil(f MessageFilter, until string) (Result, error) {
	cond, err := condition.Parse(until)
	if err != nil {
		return Result{}, Errorf(ErrBadAction, "step --until: %v", err)
	}
	var ms []view.Message
	deadline := time.Now().Add(untilWait)
	for {
		v := p.View()
		ok, saw, err := cond.Eval(&v)
		if err != nil {
			return Result{}, Errorf(ErrBadAction, "step --until %s: %v", cond, err)
		}
		if ok {
			msg := delivered(ms)
			if len(ms) == 0 {
				msg = "delivered nothing: the condition held already"
			}
			msg += fmt.Sprintf("\nok: %s: %s", cond, saw)
			p.publish(EventStep, 0, msg)
			return Result{Messages: ms, Message: msg}, nil
		}
		if time.Now().After(deadline) {
			return Result{}, Errorf(ErrNodeState, "step --until %s: still false after %v and %d delivered messages; last saw: %s", cond, untilWait, len(ms), saw)
		}
		step, err := p.engine.StepMessages(f)
		switch {
		case errors.Is(err, ErrNoHeldMessage):
			time.Sleep(5 * time.Millisecond)
		case err != nil:
			return Result{}, err
		}
		ms = append(ms, step...)
	}
}

// delivered lists delivered messages, one a line.
func delivered(ms []view.Message) string {
	var b strings.Builder
	for i, m := range ms {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("delivered " + describeMessage(m))
	}
	return b.String()
}

// heldWait bounds how long step and drop wait, in wall time, for a
// matching message: a node answers a delivered message on its own
// goroutine, so the answer a learner steps next is held a moment after
// the step that caused it.
const heldWait = time.Second

// awaitHeld runs try until it finds a held message, or heldWait passed.
func awaitHeld(try func() error) error {
	deadline := time.Now().Add(heldWait)
	for {
		err := try()
		if !errors.Is(err, ErrNoHeldMessage) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// paused reports whether the playground's cluster clock is paused.
func (p *Playground) paused() bool {
	c := p.engine.Clock()
	return c != nil && c.Paused()
}

// dropConsequence says what the two ends see of a dropped message.
func dropConsequence(m view.Message) string {
	if m.Direction == view.MessageRequest {
		return fmt.Sprintf("node %d never sees it; node %d's request times out on the cluster clock (clock advance or resume lets that happen)", m.To, m.From)
	}
	return fmt.Sprintf("node %d did the work but node %d never hears of it; its request times out on the cluster clock (clock advance or resume lets that happen)", m.From, m.To)
}

// describeMessages lists held messages, one a line.
func describeMessages(ms []view.Message, total int, paused bool) string {
	if len(ms) == 0 {
		switch {
		case total > 0:
			return fmt.Sprintf("none of the %d held messages matches", total)
		case paused:
			return "the links hold no message"
		}
		return "the links hold no message (the cluster clock runs: pause it to hold every message between nodes)"
	}
	var b strings.Builder
	for i, m := range ms {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(describeMessage(m))
	}
	return b.String()
}

// describeMessage is one held message in a line: "#12 2→1 Fetch response
// (corr 55, 310 B): high watermark 41, records 1, …".
func describeMessage(m view.Message) string {
	s := fmt.Sprintf("#%d %d→%d %s %s (corr %d, %d B, held %v)", m.ID, m.From, m.To, m.API, m.Direction, m.CorrelationID, m.Bytes, ms(m.HeldMs))
	var f []string
	for _, x := range m.Fields {
		f = append(f, x.Name+" "+x.Value)
	}
	if m.DecodeError != "" {
		f = append(f, "undecodable: "+m.DecodeError)
	}
	if len(f) > 0 {
		s += ": " + strings.Join(f, ", ")
	}
	return s
}
