package interop

import (
	"slices"
	"testing"
)

// The parsers run without Kafka: they read both tools' output.
func TestParse(t *testing.T) {
	keys, vals := ParseStatus("ClusterId:              abc\nLeaderId:               2\nCurrentVoters:          [{\"id\": 1}]\n\nnot a key: x\n")
	if !slices.Equal(keys, []string{"ClusterId", "LeaderId", "CurrentVoters"}) || vals["CurrentVoters"] != `[{"id": 1}]` {
		t.Errorf("ParseStatus: %v %v", keys, vals)
	}
	// Kafka's table: tab-separated, padded.
	cols, rows := ParseTable("NodeId\tDirectoryId           \tLag\tStatus  \t\n1     \tAAAAAAAAAAAAAAAAAAAAAA\t0  \tLeader  \t\n")
	if !slices.Equal(cols, []string{"NodeId", "DirectoryId", "Lag", "Status"}) || len(rows) != 1 || rows[0]["Status"] != "Leader" {
		t.Errorf("ParseTable (Kafka): %v %v", cols, rows)
	}
	// kraftlab's: aligned columns, cells with spaces.
	cols, rows = ParseTable("NodeId  LastFetchTimestamp  Status    \n2       now                 Leader    \n1       17 ms ago           Follower  \n")
	if !slices.Equal(cols, []string{"NodeId", "LastFetchTimestamp", "Status"}) || len(rows) != 2 || rows[1]["LastFetchTimestamp"] != "17 ms ago" {
		t.Errorf("ParseTable (kraftlab): %v %v", cols, rows)
	}
	if got := shape("0\n2\n1 0\n2 83\n"); got != "n|n|n n" {
		t.Errorf("shape: %q", got)
	}
}
