package clock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// errTimedOut is the cause of a context whose cluster-clock deadline
// passed; it wraps context.DeadlineExceeded, as that context's Err is.
var errTimedOut = fmt.Errorf("cluster clock deadline passed: %w", context.DeadlineExceeded)

// WithTimeout is context.WithTimeout on the cluster clock.
func (c *Clock) WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if c == nil {
		return context.WithTimeout(parent, d)
	}
	ctx, cancel := context.WithCancelCause(parent)
	t := c.AfterFunc(d, func() { cancel(errTimedOut) })
	return timeoutCtx{ctx}, func() {
		t.Stop()
		cancel(context.Canceled)
	}
}

// WithDeadline is context.WithDeadline with at in cluster time.
func (c *Clock) WithDeadline(parent context.Context, at time.Time) (context.Context, context.CancelFunc) {
	if c == nil {
		return context.WithDeadline(parent, at)
	}
	return c.WithTimeout(parent, c.Until(at))
}

// timeoutCtx is a context that a cluster-clock timer cancels. Its Err is
// context.DeadlineExceeded once the deadline passed, as a context of
// context.WithTimeout says, and so is that of a timeoutCtx under it; a
// context derived from it by the context package says context.Canceled,
// with the cause errTimedOut. Its Deadline is its parent's: a cluster-time
// deadline is no wall-clock one, which sockets and dialers read it as.
type timeoutCtx struct {
	context.Context
}

func (c timeoutCtx) Err() error {
	err := c.Context.Err()
	if err != nil && errors.Is(context.Cause(c.Context), errTimedOut) {
		return context.DeadlineExceeded
	}
	return err
}
