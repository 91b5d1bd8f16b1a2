// Package poll waits in tests for a condition to hold, polling with a
// deadline instead of sleeping for a state, so that a test passes on a
// loaded machine as soon as the state arrives and fails clearly when it
// never does.
package poll

import (
	"testing"
	"time"
)

// Interval is how often Until looks.
const Interval = 2 * time.Millisecond

// Until polls cond until it holds, or fails t after timeout with what it
// waited for and, if describe is given, what it saw last.
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool, describe ...func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			msg := ""
			for _, d := range describe {
				msg += "\n" + d()
			}
			t.Fatalf("timed out after %v waiting for %s%s", timeout, what, msg)
			return
		}
		time.Sleep(Interval)
	}
}
