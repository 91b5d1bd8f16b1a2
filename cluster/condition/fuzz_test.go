package condition

import "testing"

// Whatever a scenario file says, Parse returns a condition or an error;
// a parsed condition spells itself in a form that parses back to it and
// evaluates against a view without panicking.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"leader", "leader != 2", "new-leader", "epoch > baseline", "hwm >= baseline+5", "caught-up",
		"node follower role Follower", "node 3 log-end == baseline-1", "fenced 101", "broker 101 state != RUNNING",
		"metadata-lag 101 == 0", "topic orders on all brokers", "partition-leader orders-0 != 101", "isr orders-0 size >= 2",
		"hwm orders-0 == 50", "log-end my-topic-12 103 >= 47", "fetcher-lag 103 <= 3", "in-sync orders-0", "truncations orders-0 101 >= 1",
		"hwm orders-0=50", "log-end -1 1 == 1", "fetcher-lag 99999999999 == 0", "in-sync a-b-c-",
	} {
		f.Add(s)
	}
	v := derived(dataPlaneView(), nil)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(c.String())
		if err != nil || again != c {
			t.Fatalf("%q parses to %q, which parses to %v (%v)", s, c, again, err)
		}
		c.Eval(&v)
	})
}
