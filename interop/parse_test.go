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

func TestParseTopicsDescribe(t *testing.T) {
	out := "Topic: t\tTopicId: eJmGhXGFAxtkesRXZm3kUw\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: retention.ms=1000\n" +
		"\tTopic: t\tPartition: 0\tLeader: 103\tReplicas: 103,101\tIsr: 103\tElr: N/A\tLastKnownElr: N/A\n" +
		"\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 101,102\tIsr: \tElr: 102,101\tLastKnownElr: 101\n" +
		"Topic: u\tTopicId: AAAAAAAAAAAAAAAAAAAAAQ\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n" +
		"\tTopic: u\tPartition: 0\tLeader: 101\tReplicas: 101\tIsr: 101\n"
	got := ParseTopicsDescribe(out)
	if len(got) != 2 || got[0].Name != "t" || got[0].TopicID != "eJmGhXGFAxtkesRXZm3kUw" || got[0].PartitionCount != 2 ||
		got[0].ReplicationFactor != 2 || got[0].Configs != "retention.ms=1000" || got[1].Configs != "" || len(got[1].Partitions) != 1 {
		t.Fatalf("%+v", got)
	}
	p := got[0].Partitions
	if len(p) != 2 || p[0].Leader != 103 || !slices.Equal(p[0].Replicas, []int32{103, 101}) || !slices.Equal(p[0].Isr, []int32{103}) ||
		p[1].Leader != -1 || len(p[1].Isr) != 0 || !p[0].ElrUnknown || p[1].ElrUnknown ||
		!slices.Equal(p[1].Elr, []int32{102, 101}) || !slices.Equal(p[1].LastKnownElr, []int32{101}) {
		t.Fatalf("partitions %+v", p)
	}
}
