package zookeeper

import "testing"

func TestWithoutChatterKeepsTheAnswerOnly(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"Connecting to 127.0.0.1:2181\n\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n{\"host\":\"x\"}\n", `{"host":"x"}`},
		{"Connecting to 127.0.0.1:2181\nNode does not exist: /nope\n\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n", "Node does not exist: /nope"},
		{"Connecting to 127.0.0.1:2181\n\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n[a, b]\n", "[a, b]"},
	} {
		if got := withoutChatter(c.out); got != c.want {
			t.Errorf("withoutChatter(%q) = %q, want %q", c.out, got, c.want)
		}
	}
}
