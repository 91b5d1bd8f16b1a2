package server

import (
	"os"
	"path/filepath"
	"testing"
)

// The clean shutdown marker holds the broker epoch as Kafka's
// CleanShutdownFileHandler writes it; taking it deletes it, so that a
// crash after the next start counts as unclean; a missing or unreadable
// one is no clean shutdown (-1).
func TestCleanShutdownMarker(t *testing.T) {
	dir := t.TempDir()
	if e, err := takeCleanShutdown(dir); err != nil || e != -1 {
		t.Fatalf("no marker: %d %v, want -1", e, err)
	}
	if err := writeCleanShutdown(dir, 42); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, cleanShutdownFile))
	if string(b) != `{"version":0,"brokerEpoch":42}` {
		t.Fatalf("marker %q", b)
	}
	if e, err := takeCleanShutdown(dir); err != nil || e != 42 {
		t.Fatalf("marker: %d %v, want 42", e, err)
	}
	if e, _ := takeCleanShutdown(dir); e != -1 {
		t.Fatalf("a taken marker read again: %d", e)
	}
	for _, garbage := range []string{"", "{", `{"version":0}`, string(make([]byte, maxCleanShutdownSize+1))} {
		if err := os.WriteFile(filepath.Join(dir, cleanShutdownFile), []byte(garbage), 0o644); err != nil {
			t.Fatal(err)
		}
		if e, err := takeCleanShutdown(dir); err != nil || e != -1 {
			t.Errorf("marker %.20q: %d %v, want -1", garbage, e, err)
		}
		if _, err := os.Stat(filepath.Join(dir, cleanShutdownFile)); !os.IsNotExist(err) {
			t.Errorf("marker %.20q not deleted", garbage)
		}
	}
}
