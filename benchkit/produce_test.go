package benchkit

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// A short produce run measures what it says: every acknowledged record
// was read back by the consumer, the catch-up replicated what the stopped
// follower missed, and the table reports both.
func TestRunProduceQuick(t *testing.T) {
	cfg := QuickProduceConfig()
	cfg.Brokers, cfg.Acks, cfg.Duration, cfg.CatchUpBytes = 3, []Acks{AcksAll}, 200*time.Millisecond, 256<<10
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := RunProduce(ctx, cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if rep.LoopbackMBPerSec <= 0 || len(rep.Cases) != 1 {
		t.Fatalf("report %+v", rep)
	}
	c := rep.Cases[0]
	if c.Records <= 0 || c.RecordsPerSec <= 0 || c.EndToEnd.Count < c.Records || c.Produce.Count != c.Records {
		t.Fatalf("case %+v: want every acknowledged record timed and read", c)
	}
	if rep.CatchUp == nil || rep.CatchUp.Bytes <= 0 || rep.CatchUp.Bytes > cfg.CatchUpBytes {
		t.Fatalf("catch-up %+v", rep.CatchUp)
	}
	var b strings.Builder
	if err := WriteProduceTable(&b, cfg, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"records/s", "end to end p50", "catch-up:"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestProduceConfigValidate(t *testing.T) {
	for _, c := range []struct {
		edit func(*ProduceConfig)
		want string
	}{
		{func(c *ProduceConfig) { c.Brokers = 0 }, "brokers: 0 must be between 1 and 20"},
		{func(c *ProduceConfig) { c.Sizes = []int{4} }, "size: 4 B must be between 8 B and 1 MiB"},
		{func(c *ProduceConfig) { c.Duration = time.Millisecond }, "duration: 1ms must be between 100ms and 10m"},
	} {
		cfg := DefaultProduceConfig()
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || err.Error() != c.want {
			t.Errorf("Validate = %v, want %q", err, c.want)
		}
	}
	if _, err := ParseAcks("2"); err == nil {
		t.Error("acks 2 accepted")
	}
}
