package view

// TraceState is what became of a traced message.
type TraceState string

// The states of a traced message.
const (
	// TraceInFlight: on its way; its link holds it (the cluster clock is
	// paused, the link's delay runs, or it queues behind a held one).
	TraceInFlight TraceState = "in-flight"
	// TraceDelivered: a request written to its server, a response handed
	// to its caller.
	TraceDelivered TraceState = "delivered"
	// TraceDropped: dropped while held (kraftlab drop).
	TraceDropped TraceState = "dropped"
	// TraceLost: the link lost it (kraftlab link --loss) or was down.
	TraceLost TraceState = "lost"
	// TraceCut: its connection died while its link held it.
	TraceCut TraceState = "cut"
)

// TraceMessage is one message that crossed the links between nodes, as
// the space-time diagram draws it: a request as its sender sends it, a
// response as its caller's connection reads it.
type TraceMessage struct {
	// Seq numbers the messages in the order they entered their link.
	Seq uint64 `json:"seq"`
	// From and To are the link it travels: a request from the node that
	// sends it, a response from the node that answers.
	From int32 `json:"from"`
	To   int32 `json:"to"`
	// Conn and CorrelationID pair a request with its response.
	Conn          uint64           `json:"conn"`
	CorrelationID int32            `json:"correlationId"`
	Direction     MessageDirection `json:"direction"`
	// API is Kafka's name of its API, e.g. Fetch or Vote.
	API     string `json:"api"`
	Version int16  `json:"version"`
	// Bytes is the frame's size on the wire.
	Bytes int `json:"bytes"`
	// SentUs is the cluster time it entered its link and DeliveredUs the
	// one it left, in Unix microseconds; DeliveredUs is 0 unless
	// delivered.
	SentUs      int64 `json:"sentUs"`
	DeliveredUs int64 `json:"deliveredUs,omitempty"`
	// SentOrder and EndOrder place its send and its end among the
	// trace's events: while the cluster clock is paused cluster times
	// tie, the order does not. EndOrder is 0 while in flight and for a
	// message lost as it was sent.
	SentOrder uint64 `json:"sentOrder"`
	EndOrder  uint64 `json:"endOrder,omitempty"`
	// State is what became of it.
	State TraceState `json:"state"`
	// HeldID is its id among the held messages (kraftlab step --id), 0
	// if no link held it.
	HeldID uint64 `json:"heldId,omitempty"`
	// Label is the field that matters most, in a few characters: a
	// Fetch's offset ("41"), its response's high watermark and records
	// ("HWM 41 +2"), a Vote's epoch ("epoch 5"), its answer ("✓" or
	// "✗"). Empty when the trace could not afford decoding the message
	// (a large frame while the clock runs at normal speed) or its API has
	// none.
	Label string `json:"label,omitempty"`
	// Fields are its decoded fields, as messages lists them; left out of
	// a view's Trace.
	Fields []MessageField `json:"fields,omitempty"`
}

// Title is the message's API and label, as the diagrams write it:
// "Fetch 41", "Vote ✓"; a response without a label says it is one
// ("BeginQuorumEpoch response"), as its label would.
func (m TraceMessage) Title() string {
	switch {
	case m.Label != "":
		return m.API + " " + m.Label
	case m.Direction == MessageResponse:
		return m.API + " response"
	}
	return m.API
}

// Trace is the messages between nodes the links' trace keeps, for the
// space-time diagram.
type Trace struct {
	// Messages are oldest first.
	Messages []TraceMessage `json:"messages"`
	// Recorded counts the messages traced since the playground started;
	// the trace keeps the last Capacity of them.
	Recorded uint64 `json:"recorded"`
	Capacity int    `json:"capacity"`
	// NowUs is the cluster time the trace was read, Unix microseconds.
	NowUs int64 `json:"nowUs"`
	// Nodes are the playground's nodes, by ID: the diagram's columns.
	Nodes []TraceNode `json:"nodes"`
}

// TraceNode is one column of the space-time diagram.
type TraceNode struct {
	ID   int32 `json:"nodeId"`
	Kind Kind  `json:"kind"`
}

// MaxViewTrace bounds the traced messages a view carries: the live
// screen's diagram shows the last few dozen.
const MaxViewTrace = 40
