package benchkit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ProduceWorkload is one `bench produce` case pointed at any cluster's
// brokers, kraftlab's or another system's: a franz-go producer (linger 0,
// at most produceBuffered records unacknowledged, idempotent under
// acks=all) writes records of RecordBytes into Topic for Duration while a
// consumer reads them back from the start.
type ProduceWorkload struct {
	// Seeds are the brokers' listeners (host:port).
	Seeds []string
	// Topic must exist; its partitions and replication factor are the
	// caller's.
	Topic       string
	RecordBytes int
	Acks        Acks
	Duration    time.Duration
	// CPU reads the CPU time used so far by what the case charges: nil
	// charges this process (clients and, in `bench produce`, the cluster
	// too); a cluster in other processes passes a reader of theirs, so the
	// clients' own CPU is left out. A false ok leaves CPUPerMB zero.
	CPU func() (cpu time.Duration, ok bool)
}

func (w ProduceWorkload) cpuMeter() func() (time.Duration, bool) {
	if w.CPU != nil {
		return w.CPU
	}
	return cpuTime
}

// Validate checks the workload before it runs.
func (w ProduceWorkload) Validate() error {
	switch {
	case len(w.Seeds) == 0:
		return errors.New("no seed brokers")
	case w.Topic == "":
		return errors.New("no topic")
	case w.RecordBytes < minProduceRecordBytes || w.RecordBytes > 1<<20:
		return fmt.Errorf("size: %d B must be between %d B and 1 MiB", w.RecordBytes, minProduceRecordBytes)
	case w.Acks != AcksAll && w.Acks != AcksLeader:
		return fmt.Errorf("acks %q: want all or 1", w.Acks)
	case w.Duration < 100*time.Millisecond || w.Duration > 10*time.Minute:
		return fmt.Errorf("duration: %v must be between 100ms and 10m", w.Duration)
	}
	return nil
}

// ProduceAt runs w and returns what it measured: the same case, with the
// same clients and clock points, as `bench produce` runs against its own
// cluster. OfLoopback is left to the caller, which knows the ceiling.
func ProduceAt(ctx context.Context, w ProduceWorkload) (ProduceCase, error) {
	if err := w.Validate(); err != nil {
		return ProduceCase{}, fmt.Errorf("produce workload: %w", err)
	}
	return runProduceCase(ctx, w)
}

// MeasureLoopback is one TCP connection's bulk throughput over loopback
// in MB/s, measured for d: the ceiling `bench produce` compares with.
func MeasureLoopback(d time.Duration) (float64, error) {
	return measureLoopbackThroughput(d)
}
