package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// EventSay: words for everyone watching the playground, from a scenario's
// say line or kraftlab say (an instructor narrating a demo). Every live
// screen and every events --follow shows them.
const EventSay EventKind = "say"

// MaxSayBytes bounds what one say may publish: a line of the event log.
const MaxSayBytes = 500

// Sayer is an Operator that can also publish words of its own on the
// event stream. *Playground implements it in process and control.Client
// over the control socket.
type Sayer interface {
	Say(ctx context.Context, text string) (Event, error)
}

// ValidateSay checks the text of a say: one line of printable text, not
// empty, at most MaxSayBytes bytes.
func ValidateSay(text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return errors.New("say needs some text, e.g.: say Now watch the leader die")
	case len(text) > MaxSayBytes:
		return fmt.Errorf("say text is %d bytes; at most %d fit on a line of the event log", len(text), MaxSayBytes)
	case !utf8.ValidString(text):
		return errors.New("say text is not valid UTF-8")
	}
	for _, r := range text {
		if unicode.IsControl(r) {
			return fmt.Errorf("say text must be one line of printable text (it holds %q)", r)
		}
	}
	return nil
}

// Say publishes text as an EventSay, for every screen that watches the
// playground, and returns the event.
func (p *Playground) Say(_ context.Context, text string) (Event, error) {
	if p.closed.Load() {
		return Event{}, ErrClosed
	}
	text = strings.TrimSpace(text)
	if err := ValidateSay(text); err != nil {
		return Event{}, Errorf(ErrBadAction, "%v", err)
	}
	return p.events.Publish(Event{Kind: EventSay, Message: text}), nil
}

var _ Sayer = (*Playground)(nil)
