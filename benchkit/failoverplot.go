package benchkit

import (
	"errors"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
	"time"
)

// WriteControllerFailoverPlot draws rs as an SVG bar chart a user can put
// on a slide: for each metadata size, one bar a mode, the p50 time from
// the successor's election to its first CreateTopics answer (the window
// in which a controller is chosen but the cluster is not yet managed),
// each bar labelled with its value.
func WriteControllerFailoverPlot(w io.Writer, rs []ControllerFailover) error {
	var sizes []int
	var modes []Mode
	top := time.Duration(0)
	for _, r := range rs {
		if r.Rounds == 0 {
			continue // not measured
		}
		if !slices.Contains(sizes, r.Partitions) {
			sizes = append(sizes, r.Partitions)
		}
		if !slices.Contains(modes, r.Mode) {
			modes = append(modes, r.Mode)
		}
		top = max(top, r.ElectedToCreate.P50)
	}
	if len(sizes) == 0 || top <= 0 {
		return errors.New("nothing to plot")
	}
	const (
		width, height          = 800, 450
		left, right, up, below = 70, 20, 70, 60
		barW                   = 60
	)
	colors := map[Mode]string{ModeZK: "#d9534f", ModeKRaft: "#2a7ab0"}
	plotH := float64(height - up - below)
	groupW := float64(width-left-right) / float64(len(sizes))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="28" font-size="18" font-weight="bold">Controller failover: from the new controller's election to its first change</text>`+"\n", left)
	fmt.Fprintf(&b, `<text x="%d" y="50" font-size="13" fill="#555">kraftlab bench failover, profile %s, p50; ZooKeeper reads every znode first, KRaft already holds the log</text>`+"\n", left, html.EscapeString(rs[0].Profile))
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", left, height-below, width-right, height-below)
	for i, n := range sizes {
		x0 := float64(left) + groupW*float64(i) + groupW/2 - float64(barW*len(modes))/2
		for j, m := range modes {
			i := slices.IndexFunc(rs, func(r ControllerFailover) bool { return r.Partitions == n && r.Mode == m })
			if i < 0 {
				continue
			}
			d := rs[i].ElectedToCreate.P50
			h := plotH * float64(d) / float64(top)
			x := x0 + float64(j*barW)
			y := float64(height-below) - h
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%d" height="%.1f" fill="%s"/>`+"\n", x+4, y, barW-8, h, colors[m])
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="middle">%s</text>`+"\n", x+barW/2, y-5, html.EscapeString(fmtDur(d)))
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="13" text-anchor="middle">%s partitions</text>`+"\n", float64(left)+groupW*float64(i)+groupW/2, height-below+22, thousands(n))
	}
	for j, m := range modes {
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="14" fill="%s"/><text x="%d" y="%d" font-size="13">%s</text>`+"\n",
			left+j*140, height-22, colors[m], left+j*140+20, height-10, map[Mode]string{ModeZK: "ZooKeeper (Kafka 3.9)", ModeKRaft: "KRaft (Kafka 4.4)"}[m])
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// thousands writes n with thousands separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
