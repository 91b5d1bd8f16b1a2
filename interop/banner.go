package interop

import (
	"strconv"
	"strings"
)

// bannerReader collects the labelled items of `kraftlab up`'s banner: a
// line "  label  values" starts an item and a line indented to the values'
// column with no label carries it on, as long lists wrap.
type bannerReader struct {
	items map[string][]string
	label string
}

// add reads one banner line.
func (b *bannerReader) add(line string) {
	if b.items == nil {
		b.items = map[string][]string{}
	}
	if !strings.HasPrefix(line, "  ") {
		b.label = ""
		return
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		b.label = ""
		return
	}
	if !strings.HasPrefix(line, "   ") { // a label in the first column
		b.label = fields[0]
		fields = fields[1:]
	}
	if b.label != "" {
		b.items[b.label] = append(b.items[b.label], fields...)
	}
}

// controllers maps the controllers' IDs to their listeners.
func (b *bannerReader) controllers() map[int32]string {
	m := map[int32]string{}
	for id, addr := range b.nodes("controllers") {
		m[id] = addr
	}
	return m
}

// brokers lists the brokers' listeners in the banner's order.
func (b *bannerReader) brokers() []string {
	var addrs []string
	for _, addr := range b.nodes("brokers") {
		addrs = append(addrs, addr)
	}
	return addrs
}

// nodes reads an item's "ID=host:port" words, in order.
func (b *bannerReader) nodes(label string) func(yield func(int32, string) bool) {
	return func(yield func(int32, string) bool) {
		for _, w := range b.items[label] {
			id, addr, ok := strings.Cut(w, "=")
			n, err := strconv.ParseInt(id, 10, 32)
			if !ok || err != nil || !strings.Contains(addr, ":") {
				continue
			}
			if !yield(int32(n), addr) {
				return
			}
		}
	}
}
