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
	n := len(r.Frames)
	span := r.Frames[n-1].View.Timestamp - r.Frames[0].View.Timestamp + 100
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		v := r.Frames[i%n].View
		v.Timestamp += int64(i/n) * span // time runs on across laps
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
		})
	}
}
