package node

import (
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// scramName is /image/scram (Kafka's ScramImageNode.NAME).
const scramName = "scram"

// scramMechanisms are the children of /image/scram, by mechanism name
// (ScramMechanism.mechanismName), as Kafka lists them: every mechanism
// it knows, whether or not a user has a credential for it.
var scramMechanisms = []struct {
	name string
	id   int8
}{{"SCRAM-SHA-256", record.ScramSHA256}, {"SCRAM-SHA-512", record.ScramSHA512}}

// scramNode is /image/scram (ScramImageNode).
type scramNode struct {
	dir
	s *image.ScramImage
}

func (scramNode) ChildNames() []string {
	names := make([]string, len(scramMechanisms))
	for i, m := range scramMechanisms {
		names[i] = m.name
	}
	return names
}

func (n scramNode) Child(name string) Node {
	for _, m := range scramMechanisms {
		if m.name == name {
			return scramMechanismNode{s: n.s, mechanism: m.id}
		}
	}
	return nil
}

func (n scramNode) Print(p Printer) { printChildren(n, p) }

// scramMechanismNode is /image/scram/MECHANISM (ScramMechanismNode): a
// file per user.
type scramMechanismNode struct {
	dir
	s         *image.ScramImage
	mechanism int8
}

func (n scramMechanismNode) ChildNames() []string { return n.s.Users(n.mechanism) }

// Child is the user's credential. kraftlab always prints it redacted, as
// Kafka's printers do under strict redaction: a learner's tree has no use
// for the keys, and a shared screen should not show them.
func (n scramMechanismNode) Child(name string) Node {
	if n.s.Credential(n.mechanism, name) == nil {
		return nil
	}
	return leaf("ScramCredentialData(salt=" + Redacted + ", storedKey=" + Redacted + ", serverKey=" + Redacted + ", iterations=" + Redacted + ")")
}

func (n scramMechanismNode) Print(p Printer) { printChildren(n, p) }
