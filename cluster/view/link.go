package view

import (
	"errors"
	"fmt"
	"time"
)

// LinkFault is what can be wrong with a directed link.
type LinkFault struct {
	// Down drops every message.
	Down bool
	// Delay holds each message back by Delay plus a uniformly random extra
	// in [0, Jitter]; messages keep their order, as on a TCP connection.
	Delay  time.Duration
	Jitter time.Duration
	// Loss is the fraction of messages dropped, 0 to 1.
	Loss float64
}

// MaxLinkDelay bounds a link's delay and jitter.
const MaxLinkDelay = time.Minute

// Validate checks the fault's ranges.
func (f LinkFault) Validate() error {
	switch {
	case f.Delay < 0 || f.Delay > MaxLinkDelay:
		return fmt.Errorf("delay %v must be between 0 and %v", f.Delay, MaxLinkDelay)
	case f.Jitter < 0 || f.Jitter > MaxLinkDelay:
		return fmt.Errorf("jitter %v must be between 0 and %v", f.Jitter, MaxLinkDelay)
	case f.Delay%time.Millisecond != 0 || f.Jitter%time.Millisecond != 0:
		return errors.New("delay and jitter must be whole milliseconds")
	case !(f.Loss >= 0 && f.Loss <= 1):
		return fmt.Errorf("loss %v must be between 0 and 1 (0%% to 100%%)", f.Loss)
	}
	return nil
}
