package closest

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"leader", "leader", 0}, {"leder", "leader", 1}, {"", "abc", 3},
		{"controller.quorum.fetch.timout.ms", "controller.quorum.fetch.timeout.ms", 1}, {"kitten", "sitting", 3},
	} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
