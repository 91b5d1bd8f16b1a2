package pushrpc

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
)

// ErrUnsupportedVersion is returned when a message is asked for at a
// version other than Version.
var ErrUnsupportedVersion = errors.New("unsupported version")

// version is the part every message shares: the version it is read and
// written at. Only Version exists; the field keeps kmsg's contract.
type version struct{ v int16 }

// MaxVersion implements kmsg.Request and kmsg.Response.
func (version) MaxVersion() int16 { return Version }

// IsFlexible implements kmsg.Request and kmsg.Response: every version is
// flexible (KIP-482).
func (version) IsFlexible() bool { return true }

// SetVersion implements kmsg.Request and kmsg.Response.
func (m *version) SetVersion(v int16) { m.v = v }

// GetVersion implements kmsg.Request and kmsg.Response.
func (m *version) GetVersion() int16 { return m.v }

// reader decodes one message body: begin checks the version, end reads
// the trailing tagged fields (skipping unknown ones, as Kafka does) and
// refuses short or overlong input.
type reader struct {
	kbin.Reader
	api string
}

func begin(api string, v int16, src []byte) (*reader, error) {
	if v != Version {
		return nil, fmt.Errorf("%s v%d: %w", api, v, ErrUnsupportedVersion)
	}
	return &reader{Reader: kbin.Reader{Src: src}, api: api}, nil
}

func (b *reader) end() error {
	b.skipTags()
	if err := b.Complete(); err != nil {
		return fmt.Errorf("decode %s: %w", b.api, err)
	}
	if len(b.Src) > 0 {
		return fmt.Errorf("decode %s: %d bytes past the end of the message", b.api, len(b.Src))
	}
	return nil
}

// skipTags skips a tagged-field section. Each field takes at least two
// bytes, so a count the frame cannot hold stops at the first short field.
func (b *reader) skipTags() {
	n := b.Uvarint()
	for i := uint32(0); i < n && b.Ok(); i++ {
		b.Uvarint() // tag
		b.Span(int(b.Uvarint()))
	}
}

// bytes reads compact bytes, nil for null. The slice aliases the frame.
func (b *reader) bytes() []byte { return b.CompactNullableBytes() }

// appendTags closes a body with an empty tagged-field section.
func appendTags(dst []byte) []byte { return kbin.AppendUvarint(dst, 0) }
