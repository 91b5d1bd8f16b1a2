package transcript

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// Cmd is one directive: its name and arguments. Every argument must be
// read by the command (a getter marks it used), so that a misspelt one
// fails the test instead of being ignored.
type Cmd struct {
	T    *testing.T
	D    *datadriven.TestData
	used []bool
}

// Name is the directive's command.
func (c *Cmd) Name() string { return c.D.Cmd }

// Fatalf fails the test at the directive's line.
func (c *Cmd) Fatalf(format string, args ...any) {
	c.T.Helper()
	c.D.Fatalf(c.T, format, args...)
}

func (c *Cmd) arg(key string) (datadriven.CmdArg, bool) {
	for i, a := range c.D.CmdArgs {
		if a.Key == key {
			c.used[i] = true
			return a, true
		}
	}
	return datadriven.CmdArg{}, false
}

func (c *Cmd) single(key string) (string, bool) {
	c.T.Helper()
	a, ok := c.arg(key)
	if !ok {
		return "", false
	}
	if len(a.Vals) != 1 {
		c.Fatalf("%s: want one value, got %v", key, a.Vals)
	}
	return a.Vals[0], true
}

// Has reports whether a bare word (a flag) or a key=value argument named
// key is present.
func (c *Cmd) Has(key string) bool {
	_, ok := c.arg(key)
	return ok
}

// Words returns the bare words not yet read, in order (positional
// arguments), and marks them used: read a command's flags first.
func (c *Cmd) Words() []string {
	var out []string
	for i, a := range c.D.CmdArgs {
		if !c.used[i] && len(a.Vals) == 0 {
			c.used[i] = true
			out = append(out, a.Key)
		}
	}
	return out
}

// Rest returns the arguments not yet read, in order, and marks them used:
// for commands whose keys are data (e.g. 102=(epoch=4 end=70)).
func (c *Cmd) Rest() []datadriven.CmdArg {
	var out []datadriven.CmdArg
	for i, a := range c.D.CmdArgs {
		if !c.used[i] {
			c.used[i] = true
			out = append(out, a)
		}
	}
	return out
}

// Strs is key=(a,b,c) as strings (key=() is none); ok says whether key
// is present.
func (c *Cmd) Strs(key string) (vals []string, ok bool) {
	a, ok := c.arg(key)
	if !ok {
		return nil, false
	}
	for _, v := range a.Vals {
		if v = strings.TrimSpace(v); v != "" {
			vals = append(vals, v)
		}
	}
	return vals, true
}

// Str is key's value, or def.
func (c *Cmd) Str(key, def string) string {
	c.T.Helper()
	if v, ok := c.single(key); ok {
		return v
	}
	return def
}

// Int is key's integer value, or def.
func (c *Cmd) Int(key string, def int64) int64 {
	c.T.Helper()
	if n, ok := c.IntOK(key); ok {
		return n
	}
	return def
}

// IntOK is key's integer value; ok says whether key is present.
func (c *Cmd) IntOK(key string) (n int64, ok bool) {
	c.T.Helper()
	v, ok := c.single(key)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		c.Fatalf("%s=%q: %v", key, v, err)
	}
	return n, true
}

// Int32 is key's value as an int32, or def.
func (c *Cmd) Int32(key string, def int32) int32 {
	c.T.Helper()
	n := c.Int(key, int64(def))
	if int64(int32(n)) != n {
		c.Fatalf("%s=%d does not fit 32 bits", key, n)
	}
	return int32(n)
}

// MustInt32 is key's value as an int32; the argument is required.
func (c *Cmd) MustInt32(key string) int32 {
	c.T.Helper()
	if _, ok := c.arg(key); !ok {
		c.Fatalf("missing %s=N", key)
	}
	return c.Int32(key, 0)
}

// Dur is key's value as a Go duration (1.5s, 200ms), or def.
func (c *Cmd) Dur(key string, def time.Duration) time.Duration {
	c.T.Helper()
	v, ok := c.single(key)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		c.Fatalf("%s=%q: %v", key, v, err)
	}
	return d
}

// IDs is key=(1,2,3) as ids (key=() is none); ok says whether key is
// present.
func (c *Cmd) IDs(key string) (ids []int32, ok bool) {
	c.T.Helper()
	a, ok := c.arg(key)
	if !ok {
		return nil, false
	}
	ids, err := ParseIDs(a.Vals)
	if err != nil {
		c.Fatalf("%s: %v", key, err)
	}
	return ids, true
}

// Fields is key=(a=1 b=2) (or with commas) as a map; ok says whether key
// is present.
func (c *Cmd) Fields(key string) (map[string]string, bool) {
	c.T.Helper()
	a, ok := c.arg(key)
	if !ok {
		return nil, false
	}
	m, err := ParseFields(a.Vals)
	if err != nil {
		c.Fatalf("%s: %v", key, err)
	}
	return m, true
}

func (c *Cmd) done() {
	c.T.Helper()
	for i, a := range c.D.CmdArgs {
		if !c.used[i] {
			c.Fatalf("%s: unknown argument %q", c.D.Cmd, a.String())
		}
	}
}

// ParseIDs reads the values of a (1,2,3) argument; () is none.
func ParseIDs(vals []string) ([]int32, error) {
	if len(vals) == 1 && strings.TrimSpace(vals[0]) == "" {
		return []int32{}, nil
	}
	ids := make([]int32, 0, len(vals))
	for _, v := range vals {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return nil, err
		}
		ids = append(ids, int32(n))
	}
	return ids, nil
}

// ParseFields reads the values of an (a=1 b=2) or (a=1, b=2) argument.
func ParseFields(vals []string) (map[string]string, error) {
	m := map[string]string{}
	for _, v := range vals {
		for _, kv := range strings.Fields(v) {
			k, val, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, &fieldError{kv}
			}
			m[k] = val
		}
	}
	return m, nil
}

type fieldError struct{ field string }

func (e *fieldError) Error() string { return "want key=value, got " + strconv.Quote(e.field) }
