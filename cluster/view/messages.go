package view

// MessageDirection is which way a held message goes on its connection.
type MessageDirection string

// The directions of a held message.
const (
	// MessageRequest: a request not yet written to its server.
	MessageRequest MessageDirection = "request"
	// MessageResponse: a response read, not yet delivered to its caller.
	MessageResponse MessageDirection = "response"
)

// Message is a message between nodes that a link holds: while the
// cluster clock is paused every one waits at its link until it is
// stepped, dropped or the clock runs again (a link's delay holds them
// too). The view lists them in the order they came.
type Message struct {
	// ID names the message for step and drop.
	ID uint64 `json:"id"`
	// From and To are the link it travels: a request from the node that
	// sends it, a response from the node that answers.
	From int32 `json:"from"`
	To   int32 `json:"to"`
	// Conn numbers the TCP connection it travels on: a connection
	// delivers its messages of one direction in order.
	Conn      uint64           `json:"conn"`
	Direction MessageDirection `json:"direction"`
	// API is Kafka's name of the message's API, e.g. Fetch or Vote.
	API     string `json:"api"`
	Version int16  `json:"version"`
	// CorrelationID pairs a request with its response.
	CorrelationID int32 `json:"correlationId"`
	// Bytes is the frame's size on the wire.
	Bytes int `json:"bytes"`
	// HeldMs is how long, in cluster time, it has been held.
	HeldMs int64 `json:"heldMs"`
	// Fields are the decoded fields that matter for learning (a Fetch's
	// offsets and high watermark, a Vote's epochs), in order; none for
	// the other APIs. DecodeError says why a frame could not be decoded.
	Fields      []MessageField `json:"fields,omitempty"`
	DecodeError string         `json:"decodeError,omitempty"`
}

// MessageField is one decoded field of a held message.
type MessageField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Field returns the value of the field named name, "" if it has none.
func (m Message) Field(name string) string {
	for _, f := range m.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// MaxViewMessages bounds the held messages a view lists: a link's delay
// under load may hold thousands.
const MaxViewMessages = 64
