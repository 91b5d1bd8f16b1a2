package engine

import (
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Trace implements cluster.Engine.
func (e *engine) Trace(last int) view.Trace {
	entries := e.links.Trace(last)
	t := view.Trace{Messages: make([]view.TraceMessage, len(entries)), Capacity: wire.TraceCapacity}
	for i, en := range entries {
		t.Messages[i] = traceView(en)
	}
	if n := len(entries); n > 0 {
		t.Recorded = entries[n-1].Seq
	}
	return t
}

var traceStates = map[wire.Fate]view.TraceState{
	wire.FateInFlight:  view.TraceInFlight,
	wire.FateDelivered: view.TraceDelivered,
	wire.FateDropped:   view.TraceDropped,
	wire.FateLost:      view.TraceLost,
	wire.FateCut:       view.TraceCut,
}

// traceView is a traced message as the views show it.
func traceView(en wire.TraceEntry) view.TraceMessage {
	m := view.TraceMessage{
		Seq: en.Seq, From: en.Link.From, To: en.Link.To, Conn: en.Conn, CorrelationID: en.Corr,
		Direction: view.MessageRequest, API: kmsg.NameForKey(en.Key), Version: en.Version, Bytes: en.Bytes,
		SentUs: en.Sent.UnixMicro(), SentOrder: en.SentOrder, EndOrder: en.EndOrder,
		State: traceStates[en.Fate], HeldID: en.Held,
	}
	if en.Dir == wire.DirResponse {
		m.Direction = view.MessageResponse
	}
	if !en.Delivered.IsZero() {
		m.DeliveredUs = en.Delivered.UnixMicro()
	}
	for _, f := range en.Fields {
		m.Fields = append(m.Fields, view.MessageField{Name: f.Name, Value: f.Value})
	}
	m.Label = traceLabel(kmsg.Key(en.Key), en.Dir, en.Fields)
	return m
}

// fieldsOf are a summary's fields, found by name whatever partition
// prefix they carry.
type fieldsOf []wire.Field

// all returns the values of the fields named name, in order, and counts
// the partitions the summary left out ("more partitions").
func (fs fieldsOf) all(name string) []string {
	var out []string
	for _, f := range fs {
		if f.Name == name || strings.HasSuffix(f.Name, " "+name) {
			out = append(out, f.Value)
		}
	}
	return out
}

// one is the value of the only field named name, "" if none or several.
func (fs fieldsOf) one(name string) string {
	if v := fs.all(name); len(v) == 1 {
		return v[0]
	}
	return ""
}

// more is how many partitions the summary left out.
func (fs fieldsOf) more() int {
	n, _ := strconv.Atoi(fs.one("more partitions"))
	return n
}

// traceLabel is the field of a message that matters most, in a few
// characters; "" when there is none (or no summary).
func traceLabel(key kmsg.Key, dir wire.Direction, f fieldsOf) string {
	if len(f) == 0 {
		return ""
	}
	if errs := f.all("error"); len(errs) > 0 {
		return errs[0]
	}
	req := dir == wire.DirRequest
	switch key {
	case kmsg.Fetch:
		if req {
			offs := f.all("fetch offset")
			if len(offs) > 1 {
				return strconv.Itoa(len(offs)+f.more()) + " partitions"
			}
			return f.one("fetch offset")
		}
		hwms := f.all("high watermark")
		records := 0
		for _, r := range f.all("records") {
			n, _ := strconv.Atoi(r)
			records += n
		}
		var s string
		switch {
		case len(hwms) == 1:
			s = "HWM " + hwms[0]
		case len(hwms) > 1:
			s = strconv.Itoa(len(hwms)+f.more()) + " partitions"
		}
		if records > 0 {
			s += " +" + strconv.Itoa(records)
		}
		if len(f.all("diverging epoch")) > 0 {
			s += " diverging"
		}
		return strings.TrimSpace(s)
	case kmsg.Vote:
		if req {
			s := "epoch " + f.one("candidate epoch")
			if f.one("pre-vote") == "true" {
				s = "pre " + s
			}
			return s
		}
		switch f.one("granted") {
		case "true":
			return "✓"
		case "false":
			return "✗"
		}
	case kmsg.BeginQuorumEpoch:
		if req {
			return "leader " + f.one("leader") + " epoch " + f.one("epoch")
		}
	case kmsg.EndQuorumEpoch:
		if req {
			return "epoch " + f.one("epoch")
		}
	case kmsg.BrokerHeartbeat:
		if req {
			return "offset " + f.one("metadata offset")
		}
		if f.one("fenced") == "true" {
			return "fenced"
		}
		return "unfenced"
	case kmsg.AlterPartition:
		if isr := f.all("ISR"); len(isr) == 1 { // a request's "new ISR" too
			if req {
				return "new ISR " + isr[0]
			}
			return "ISR " + isr[0]
		}
	case kmsg.FetchSnapshot:
		if req {
			return "position " + f.one("position")
		}
		if b := f.one("bytes"); b != "" {
			return b + " bytes"
		}
	}
	return ""
}
