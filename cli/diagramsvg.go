package cli

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// The SVG diagram's geometry, in pixels: a gutter of times on the left,
// a column per node, a row per send or delivery.
const (
	svgGutter   = 100
	svgColumn   = 180
	svgRow      = 22
	svgFirstRow = 100 // the first row's y
	svgLegend   = 50
	svgCharW    = 6.6 // a label character at 11px monospace
)

// The SVG diagram's colours: a request's, a response's, a message lost
// or dropped, one whose connection was cut.
var svgColours = map[string]string{
	"request":  "#1f5fa8",
	"response": "#2e7d32",
	"lost":     "#c62828",
	"cut":      "#757575",
}

// svgColour is the colour a message is drawn in.
func svgColour(m view.TraceMessage) string {
	switch m.State {
	case view.TraceDropped, view.TraceLost:
		return "lost"
	case view.TraceCut:
		return "cut"
	}
	if m.Direction == view.MessageResponse {
		return "response"
	}
	return "request"
}

// writeSVG writes t as a space-time diagram: one column per node, time
// (the order of sends and deliveries) flowing down, an arrow per message
// from its sender at its send to its receiver at its delivery. A message
// in flight is dashed and ends half way, at the bottom (now); one dropped
// or lost ends in a cross.
func writeSVG(w io.Writer, t view.Trace) error {
	nodes := diagramNodes(t)
	col := map[int32]float64{}
	for i, n := range nodes {
		col[n.ID] = svgGutter + svgColumn*(float64(i)+0.5)
	}
	ends := diagramEnds(t.Messages)
	row := map[uint64]int{} // an end's order → its row
	for _, e := range ends {
		if _, ok := row[e.order]; !ok {
			row[e.order] = len(row)
		}
	}
	y := func(r int) float64 { return svgFirstRow + float64(r)*svgRow }
	now := len(row) // the row of what is still in flight
	width := svgGutter + svgColumn*len(nodes) + 20
	height := int(y(now)) + svgRow + svgLegend

	b := bufio.NewWriter(w)
	fmt.Fprintf(b, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">
<rect width="100%%" height="100%%" fill="white"/>
<defs>
`, width, height, width, height)
	for _, name := range []string{"request", "response", "lost", "cut"} {
		fmt.Fprintf(b, `<marker id="head-%s" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="%s"/></marker>
`, name, svgColours[name])
	}
	b.WriteString("</defs>\n")
	fmt.Fprintf(b, `<text x="10" y="24" font-size="15" font-weight="bold">%s</text>
`, esc(svgTitle(t)))
	if t.Recorded > uint64(t.Capacity) && t.Capacity > 0 {
		fmt.Fprintf(b, `<text x="10" y="42" font-size="11" fill="#555">%s</text>
`, esc(fmt.Sprintf("the trace keeps the last %d of the %d messages sent; older ones are gone", t.Capacity, t.Recorded)))
	}

	// The nodes: a header and a lifeline each.
	for _, n := range nodes {
		x := col[n.ID]
		fmt.Fprintf(b, `<text x="%.1f" y="62" font-size="15" font-weight="bold" text-anchor="middle">%d</text>
`, x, n.ID)
		if n.Kind != "" {
			fmt.Fprintf(b, `<text x="%.1f" y="76" font-size="11" fill="#555" text-anchor="middle">%s</text>
`, x, esc(string(n.Kind)))
		}
		fmt.Fprintf(b, `<line class="lifeline" x1="%.1f" y1="84" x2="%.1f" y2="%.1f" stroke="#bbb" stroke-width="1"/>
`, x, x, y(now))
	}

	// The times, where they move on by a millisecond: a request's send
	// time is when its caller queued it, a little before its row.
	var shown int64
	for _, e := range ends {
		m := t.Messages[e.m]
		us := m.SentUs
		if !e.send {
			us = m.DeliveredUs
		}
		if ms := us / 1000; us != 0 && ms > shown { // a drop's time is not kept
			shown = ms
			fmt.Fprintf(b, `<text x="%d" y="%.1f" font-size="10" fill="#555" text-anchor="end" font-family="monospace">%s</text>
`, svgGutter-10, y(row[e.order])+3, clockTime(us))
		}
	}
	if len(t.Messages) == 0 {
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="12" fill="#555">no message crossed the links in this window</text>
`, svgGutter, svgFirstRow)
	}

	for _, m := range t.Messages {
		x1, y1 := col[m.From], y(row[m.SentOrder])
		x2 := col[m.To]
		var y2 float64
		var cross, dashed bool
		label := m.Title()
		switch m.State {
		case view.TraceDelivered:
			y2 = y(row[m.EndOrder])
		case view.TraceInFlight:
			x2, y2, dashed = x1+(x2-x1)/2, y(now), true
		case view.TraceLost:
			x2, y2, cross = x1+(x2-x1)/4, y1+svgRow/2, true
		default: // dropped, or cut with its connection, while held
			y2 = y(now)
			if m.EndOrder != 0 {
				y2 = y(row[m.EndOrder])
			}
			x2, cross, dashed = x1+(x2-x1)/2, true, m.State == view.TraceCut
		}
		if f := fate(m); f != "" {
			label += " · " + f
		}
		colour := svgColour(m)
		fmt.Fprintf(b, `<g class="message %s %s">
<title>%s</title>
<line class="arrow" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"`,
			m.Direction, m.State, esc(svgTooltip(m)), x1, y1, x2, y2, svgColours[colour])
		if dashed {
			b.WriteString(` stroke-dasharray="6 4"`)
		}
		if !cross {
			fmt.Fprintf(b, ` marker-end="url(#head-%s)"`, colour)
		}
		b.WriteString("/>\n")
		if cross {
			fmt.Fprintf(b, `<path class="cross" d="M%.1f,%.1f l10,10 m0,-10 l-10,10" stroke="%s" stroke-width="2" fill="none"/>
`, x2-5, y2-5, svgColours[colour])
		}
		mx, my := (x1+x2)/2, (y1+y2)/2
		lw := float64(utf8.RuneCountInString(label))*svgCharW + 6
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="13" fill="white" fill-opacity="0.85"/>
<text x="%.1f" y="%.1f" font-size="11" font-family="monospace" text-anchor="middle" fill="%s">%s</text>
</g>
`, mx-lw/2, my-10, lw, mx, my, svgColours[colour], esc(label))
	}
	svgLegendOf(b, y(now)+svgRow+10)
	b.WriteString("</svg>\n")
	return b.Flush()
}

// svgTitle is the diagram's heading: how many messages, over what
// stretch of cluster time.
func svgTitle(t view.Trace) string {
	s := fmt.Sprintf("kraftlab: %d messages between nodes", len(t.Messages))
	if len(t.Messages) == 1 {
		s = "kraftlab: 1 message between nodes"
	}
	if n := len(t.Messages); n > 0 {
		s += fmt.Sprintf(", %s – %s cluster time", clockTime(t.Messages[0].SentUs), clockTime(t.NowUs))
	}
	return s
}

// svgTooltip is what a viewer shows over a message: all it is.
func svgTooltip(m view.TraceMessage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s v%d, sent %s", m.Seq, describeTraced(m), m.Version, clockTime(m.SentUs))
	if m.DeliveredUs != 0 {
		fmt.Fprintf(&b, ", delivered %s (%dµs later)", clockTime(m.DeliveredUs), m.DeliveredUs-m.SentUs)
	}
	for i, f := range m.Fields {
		if i == 0 {
			b.WriteString(":")
		}
		fmt.Fprintf(&b, " %s %s;", f.Name, f.Value)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// svgLegendOf writes the legend at height top.
func svgLegendOf(b *bufio.Writer, top float64) {
	x := 10.0
	for _, l := range []struct {
		colour, text string
		dashed       bool
	}{{"request", "request", false}, {"response", "response", false}, {"request", "in flight (held)", true}, {"lost", "dropped or lost", false}} {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"`, x, top, x+30, top, svgColours[l.colour])
		if l.dashed {
			b.WriteString(` stroke-dasharray="6 4"`)
		}
		if l.colour == "lost" {
			fmt.Fprintf(b, `/>
<path d="M%.1f,%.1f l10,10 m0,-10 l-10,10" stroke="%s" stroke-width="2" fill="none"`, x+25, top-5, svgColours[l.colour])
		} else {
			fmt.Fprintf(b, ` marker-end="url(#head-%s)"`, l.colour)
		}
		fmt.Fprintf(b, `/>
<text x="%.1f" y="%.1f" font-size="11">%s</text>
`, x+38, top+4, esc(l.text))
		x += 150
	}
}

// esc escapes s for XML text and attributes.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
