package view

// Attached is how a view of a real Kafka cluster was read: kraftlab polls
// it with Kafka's own requests and sees only what they answer.
type Attached struct {
	// Bootstrap and BootstrapController are the addresses asked first,
	// as --bootstrap-server and --bootstrap-controller named them.
	Bootstrap           []string `json:"bootstrap,omitempty"`
	BootstrapController []string `json:"bootstrapController,omitempty"`
	// PollMs is how long the poll behind the view took.
	PollMs int64 `json:"pollMs"`
	// Errors are what the poll could not read, one line each: a node
	// that did not answer, a request a broker refused.
	Errors []string `json:"errors,omitempty"`
	// Unreachable names what only JMX shows and the wire does not carry,
	// so that no pane pretends to know it.
	Unreachable []string `json:"unreachable"`
	// Unread are the parts of the cluster the poll could not read
	// (brokers, quorum, topics, groups): nothing is inferred from them,
	// and the topics and groups shown are the last ones read.
	Unread []string `json:"unread,omitempty"`
	// FencedListed says DescribeCluster listed fenced brokers (v2, Kafka
	// 4.0+); before that a fenced broker is not listed at all.
	FencedListed bool `json:"fencedListed"`
}
