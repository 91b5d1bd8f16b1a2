package transcript

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Lines gathers a directive's output, one line at a time.
type Lines []string

// Addf adds a line.
func (l *Lines) Addf(format string, args ...any) { *l = append(*l, fmt.Sprintf(format, args...)) }

// String is the lines, each ended by a newline.
func (l Lines) String() string {
	if len(l) == 0 {
		return ""
	}
	return strings.Join(l, "\n") + "\n"
}

// IDs prints ids as (1,2,3), none as ().
func IDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return "(" + strings.Join(s, ",") + ")"
}

// Code is a Kafka error code's name: NONE for 0, Kafka's names where kerr
// kept older ones.
func Code(code int16) string {
	switch code {
	case 0:
		return "NONE"
	case kerr.NotLeaderForPartition.Code:
		return "NOT_LEADER_OR_FOLLOWER" // KIP-392's name
	}
	if e := kerr.TypedErrorForCode(code); e != nil && e.Code == code {
		return e.Message
	}
	return fmt.Sprintf("code %d", code)
}

// Err prints an error as the Kafka code it wraps and what the code's own
// text does not say: error=NOT_ENOUGH_REPLICAS "partition t-0: ISR [1] is
// smaller than min.insync.replicas 2". An error wrapping no code prints
// as error=UNKNOWN_SERVER_ERROR with its text.
func Err(err error) string {
	if err == nil {
		return "error=NONE"
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return fmt.Sprintf("error=%s %q", Code(kerr.UnknownServerError.Code), err.Error())
	}
	msg := strings.TrimSuffix(err.Error(), ke.Error())
	msg = strings.TrimSuffix(msg, ": ")
	if msg == "" {
		return "error=" + Code(ke.Code)
	}
	return fmt.Sprintf("error=%s %q", Code(ke.Code), msg)
}

// Clock is a clock the script moves; it is safe to read from the
// goroutines of the machine under test.
type Clock struct {
	mu         sync.Mutex
	start, now time.Time
}

// NewClock starts a clock at start.
func NewClock(start time.Time) *Clock { return &Clock{start: start, now: start} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t; it never goes back.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
}

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Elapsed is the time since the clock started.
func (c *Clock) Elapsed() time.Duration { return c.Now().Sub(c.start) }

// At prints a time as its offset from the clock's start: +1.125s.
func (c *Clock) At(t time.Time) string { return "+" + t.Sub(c.start).String() }
