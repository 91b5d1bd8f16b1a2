package interop

import (
	"path/filepath"
	"strings"
	"testing"
)

// checkOffsetsDump runs kafka-dump-log --offsets-decoder on every broker's
// __consumer_offsets segments and checks that Kafka decodes every record
// the coordinators wrote: offset commits (key type 1) and group metadata
// (key type 2) of group, in the value versions Kafka 4.4 writes.
func checkOffsetsDump(t *testing.T, k *Kafka, p *Playground, group string) {
	t.Helper()
	segments, _ := filepath.Glob(filepath.Join(p.DataDir, "node-*", "__consumer_offsets-*", "*.log"))
	if len(segments) == 0 {
		t.Fatalf("no __consumer_offsets segment under %s", p.DataDir)
	}
	r := runTool(t, k, MainDumpLog, "--offsets-decoder", "--files", strings.Join(segments, ","))
	if r.Err != nil {
		t.Fatalf("kafka-dump-log --offsets-decoder: %v", r.Err)
	}
	if strings.Contains(r.Stdout, "Exception") || strings.Contains(r.Stderr, "Exception") {
		t.Errorf("kafka-dump-log --offsets-decoder failed to decode:\n%s", r.Stderr)
	}
	commits, metadata := 0, 0
	for _, line := range strings.Split(r.Stdout, "\n") {
		if !strings.HasPrefix(line, "| offset: ") {
			continue
		}
		key, payload, ok := strings.Cut(line, " payload: ")
		switch {
		case !ok || !strings.Contains(key, " key: {"):
			t.Errorf("a record Kafka did not decode: %s", line)
		case !strings.Contains(key, `"group":"`+group+`"`):
		case strings.Contains(key, `"type":"1"`) && strings.Contains(payload, `"version":"4"`) && strings.Contains(payload, `"offset":`):
			commits++
		case strings.Contains(key, `"type":"2"`) && strings.Contains(payload, `"version":"3"`) && strings.Contains(payload, `"protocolType":"consumer"`):
			metadata++
		case strings.Contains(key, `"type":"2"`) && strings.TrimSpace(payload) == "<DELETE>":
		default:
			t.Errorf("a record of %s Kafka reads otherwise than expected: %s", group, line)
		}
	}
	if commits == 0 || metadata == 0 {
		t.Errorf("Kafka decoded %d offset commits and %d group metadata records of %s; want both", commits, metadata, group)
	}
}
