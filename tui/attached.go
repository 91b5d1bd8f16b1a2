package tui

// notOnTheWire is what a pane says in place of what kraftlab cannot see
// of a real cluster it is attached to.
func notOnTheWire(what string) string {
	return what + ": not visible over the wire (attached)"
}
