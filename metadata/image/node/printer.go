package node

import "strings"

// Printer receives a walk of the tree (Kafka's MetadataNodePrinter).
type Printer interface {
	// EnterNode starts the child named name; LeaveNode ends it.
	EnterNode(name string)
	LeaveNode()
	// Output is a file's text.
	Output(text string)
	// RedactConfig reports whether the value of config key of a resource
	// of type resourceType is to be hidden.
	RedactConfig(resourceType int8, key string) bool
}

// Redacted stands for a config value a printer hides.
const Redacted = "[redacted]"

// stringifier is Kafka's NodeStringifier: "name(child(text), text)" on
// one line, with strict redaction (every config value hidden), as Kafka's
// MetadataNode.stringify.
type stringifier struct {
	b        strings.Builder
	prefixes []string
}

func (s *stringifier) pop() string {
	p := s.prefixes[len(s.prefixes)-1]
	s.prefixes = s.prefixes[:len(s.prefixes)-1]
	return p
}

func (s *stringifier) push(p string) { s.prefixes = append(s.prefixes, p) }

func (s *stringifier) EnterNode(name string) {
	s.b.WriteString(s.pop())
	s.push(", ")
	s.b.WriteString(name)
	s.b.WriteByte('(')
	s.push("")
}

func (s *stringifier) LeaveNode() {
	s.b.WriteByte(')')
	s.pop()
}

func (s *stringifier) Output(text string) {
	s.b.WriteString(s.pop())
	s.b.WriteString(text)
	s.push(", ")
}

func (*stringifier) RedactConfig(int8, string) bool { return true }

// Stringify prints n on one line as Kafka's MetadataNode.stringify does,
// config values redacted.
func Stringify(n Node) string {
	s := &stringifier{prefixes: []string{""}}
	n.Print(s)
	return s.b.String()
}

// shellPrinter is kafka-metadata-shell's ShellNodePrinter: "name:" per
// entered node, text on its own line, two spaces of indent per level,
// nothing redacted.
type shellPrinter struct {
	b     strings.Builder
	depth int
}

func (s *shellPrinter) indent() {
	for range s.depth {
		s.b.WriteString("  ")
	}
}

func (s *shellPrinter) EnterNode(name string) {
	s.indent()
	s.b.WriteString(name)
	s.b.WriteString(":\n")
	s.depth++
}

func (s *shellPrinter) LeaveNode() { s.depth-- }

func (s *shellPrinter) Output(text string) {
	s.indent()
	s.b.WriteString(text)
	s.b.WriteByte('\n')
}

func (*shellPrinter) RedactConfig(int8, string) bool { return false }

// Cat prints n as the shell's cat prints a file (its text and a newline)
// and as its tree prints a directory (each descendant, indented under its
// "name:" line). Kafka's cat refuses a directory; kraftlab's prints it.
func Cat(n Node) string {
	s := &shellPrinter{}
	n.Print(s)
	return s.b.String()
}
