package controller

import (
	"fmt"
	"testing"
)

// onLoop runs f on the controller's loop, which owns its state.
func (h *harness) onLoop(f func()) {
	done := make(chan struct{})
	h.ctl.box.post(func() { f(); close(done) })
	<-done
}

// BenchmarkFenceDecision measures what fencing one broker costs the loop:
// finding its partitions and building their changes (a scan of every
// partition; Kafka keeps a broker-to-ISR index instead).
func BenchmarkFenceDecision(b *testing.B) {
	for _, parts := range []int32{1_000, 10_000} {
		b.Run(fmt.Sprintf("partitions=%d", parts), func(b *testing.B) {
			h, _ := cluster(b, 3, Config{})
			h.createTopic("t", parts, 3)
			h.onLoop(func() {
				img := h.ctl.st.working
				b.ResetTimer()
				for range b.N {
					recs, _ := h.ctl.fenceRecords(img, 101, img.Cluster().Broker(101).Epoch, "bench")
					if len(recs) != int(parts)+1 {
						b.Fatalf("%d records", len(recs))
					}
				}
			})
		})
	}
}

// BenchmarkCreateTopic measures checking and placing one CreateTopics
// request of 1,000 partitions (without the commit).
func BenchmarkCreateTopic(b *testing.B) {
	h, _ := cluster(b, 3, Config{})
	req := createTopic("t", 1_000, 3)
	h.onLoop(func() {
		b.ResetTimer()
		for range b.N {
			o := h.ctl.createTopics(req)
			if len(o.records) != 1_001 {
				b.Fatalf("%d records", len(o.records))
			}
		}
	})
}
