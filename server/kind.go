package server

import "fmt"

// Kind is what a node is in the cluster.
type Kind uint8

// The kinds of node.
const (
	// Controller is a voter of the metadata quorum (Kafka's
	// ControllerServer, process.roles=controller).
	Controller Kind = iota + 1
	// Broker observes the metadata log (Kafka's BrokerServer,
	// process.roles=broker).
	Broker
)

// String returns "controller" or "broker", the names views and the CLI use.
func (k Kind) String() string {
	switch k {
	case Controller:
		return "controller"
	case Broker:
		return "broker"
	}
	return fmt.Sprintf("Kind(%d)", k)
}
