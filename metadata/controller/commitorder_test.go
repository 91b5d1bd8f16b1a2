package controller

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// One high watermark commits ten batches at once: their events and
// answers still follow the log, though each batch's notice travels on a
// goroutine of its own.
func TestBatchesCommittedTogetherFinishInLogOrder(t *testing.T) {
	h, _ := cluster(t, 3, Config{SessionTimeout: 9 * time.Second})
	h.mu.Lock()
	h.hold = true
	h.mu.Unlock()
	var answers []<-chan kmsg.Response
	for i := range 10 {
		answers = append(answers, h.send(createTopic(fmt.Sprintf("t%d", i), 1, 1)))
	}
	h.sync()
	h.commit(true)
	for _, a := range answers {
		if resp := h.wait(a).(*kmsg.CreateTopicsResponse); resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("create %s: %+v", resp.Topics[0].Topic, resp.Topics[0])
		}
	}
	h.sync()
	evs := h.eventsOf(EventTopicCreated)
	if len(evs) != 10 {
		t.Fatalf("%d topic-created events, want 10", len(evs))
	}
	for i, ev := range evs {
		if want := fmt.Sprintf("t%d", i); ev.Topic != want {
			t.Fatalf("event %d names %s, want %s: the events left the log's order", i, ev.Topic, want)
		}
	}
}
