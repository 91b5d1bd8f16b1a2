package tui

import (
	"context"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kraftlab/kraftlab/cluster"
)

// BenchmarkFrame is the screen's work for one pull: take the snapshot,
// then draw the whole screen, at 200x60. The real screen does this ten
// times a second (plus a redraw per key), so ten times the time per op
// per second is its CPU at rest.
func BenchmarkFrame(b *testing.B) {
	r := loadRecording(&testing.T{}, "steady")
	m := New(context.Background(), nil, Options{Started: r.Started})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	drawFrames(b, m, r)
}

// drawFrames is b.N pulls of the recording's views into m, each drawn:
// the frames in turn, with time running on across laps.
func drawFrames(b *testing.B, m *Model, r recording) {
	n := len(r.Frames)
	span := r.Frames[n-1].View.Timestamp - r.Frames[0].View.Timestamp + 100
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		v := r.Frames[i%n].View
		v.Timestamp += int64(i/n) * span
		m.pollSeq++
		m.Update(snapshotMsg{seq: m.pollSeq, view: v, events: []cluster.Event{}})
		_ = m.View()
	}
}

// BenchmarkFrameDataPlane is BenchmarkFrame on the replication
// recording (a topic of three partitions of replication factor 3, a
// producer writing, a slowed link) with each data pane in the brokers'
// place.
func BenchmarkFrameDataPlane(b *testing.B) {
	r := loadRecording(&testing.T{}, "replica-slow")
	for p := paneBrokers; p < numPanes; p++ {
		b.Run(p.String(), func(b *testing.B) {
			m := New(context.Background(), nil, Options{Started: r.Started})
			m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
			m.pane = p
			drawFrames(b, m, r)
		})
	}
}

// BenchmarkFrameLesson is BenchmarkFrame at 160x48 without a lesson, and
// with the lesson panel showing a verdict, its evidence and the lesson's
// words: the panel's share of a frame.
func BenchmarkFrameLesson(b *testing.B) {
	r := loadRecording(&testing.T{}, "steady")
	for _, withLesson := range []bool{false, true} {
		name := "none"
		if withLesson {
			name = "verdict"
		}
		b.Run(name, func(b *testing.B) {
			opts := Options{Started: r.Started}
			if withLesson {
				opts.Lesson = NewLesson("Pull replication: a follower's Fetch is its acknowledgement.", 17)
				defer opts.Lesson.Close()
			}
			m := New(context.Background(), nil, opts)
			m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
			if withLesson {
				for _, msg := range []tea.Msg{
					lessonNextMsg{line: 23, ask: true, comment: []string{"Cut one follower off from everyone: no Fetch leaves it any more."}},
					lessonAskMsg{line: 23, question: "A follower is cut off. What happens to the high watermark?", choices: []string{"It stops", "It goes on: two of three voters are a majority", "It goes back"}},
					lessonRanMsg{line: 24, text: "isolate follower", ok: true, output: "isolated node 2 (Follower in epoch 1): every link to and from it is down"},
					lessonRanMsg{line: 25, text: "wait hwm >= baseline+5", ok: true, output: "ok: hwm 7 (want >= 7); leader 1 in epoch 1, hwm 7 (after 451ms)"},
					lessonVerdictMsg{got: 2, answer: 2, right: "2) It goes on: two of three voters are a majority", said: "It goes on: two of three voters are a majority", evidence: []int{24, 25}},
					lessonRanMsg{line: 26, kind: lineSay, ok: true, output: "» The HWM went on with two of three voters: a majority of Fetches commits"},
					lessonWantMsg{phase: lessonWaitEnter},
				} {
					m.Update(msg)
				}
			}
			drawFrames(b, m, r)
		})
	}
}
