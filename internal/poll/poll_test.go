package poll

import (
	"strings"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	Until(t, 10*time.Second, "three looks", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("looked %d times, want 3", n)
	}
}

// failing records a Fatalf without stopping the test that uses it.
type failing struct {
	testing.TB
	msg string
}

func (f *failing) Helper() {}
func (f *failing) Fatalf(format string, args ...any) {
	f.msg = format
	for _, a := range args {
		f.msg += " " + strings.TrimSpace(strings.ReplaceAll(stringOf(a), "\n", " "))
	}
}

func stringOf(a any) string {
	switch v := a.(type) {
	case string:
		return v
	case time.Duration:
		return v.String()
	}
	return ""
}

func TestUntilSaysWhatItWaitedForAndSaw(t *testing.T) {
	f := &failing{TB: t}
	Until(f, 5*time.Millisecond, "the impossible", func() bool { return false }, func() string { return "saw nothing" })
	if !strings.Contains(f.msg, "the impossible") || !strings.Contains(f.msg, "saw nothing") {
		t.Errorf("failure message %q", f.msg)
	}
}
