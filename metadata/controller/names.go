package controller

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
	"strings"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// maxTopicNameLength is Kafka's Topic.MAX_NAME_LENGTH.
const maxTopicNameLength = 249

// ValidateTopicName is Kafka's Topic.validate: the error says why name
// cannot name a topic.
func ValidateTopicName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("topic name is illegal, it can't be empty")
	case name == "." || name == "..":
		return fmt.Errorf("topic name cannot be \".\" or \"..\"")
	case len(name) > maxTopicNameLength:
		return fmt.Errorf("topic name is illegal, it can't be longer than %d characters, topic name: %.40q…", maxTopicNameLength, name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("topic name %q is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return nil
}

// unifyTopicName is Kafka's Topic.unifyCollisionChars: '.' and '_' collide
// in metric names.
func unifyTopicName(name string) string { return strings.ReplaceAll(name, ".", "_") }

// topicNames are the names a CreateTopics request may not take: the
// image's and those the request already created.
type topicNames struct {
	img     *image.MetadataImage
	created map[string]bool
	// unified maps Topic.unifyCollisionChars of every name to the name;
	// built on the first name with '.' or '_'.
	unified map[string]string
}

func newTopicNames(img *image.MetadataImage) *topicNames {
	return &topicNames{img: img, created: map[string]bool{}}
}

func (n *topicNames) has(name string) bool {
	return n.created[name] || n.img.Topics().TopicByName(name) != nil
}

func (n *topicNames) add(name string) {
	n.created[name] = true
	if n.unified != nil {
		n.unified[unifyTopicName(name)] = name
	}
}

// colliding is a taken name that collides with name, "" if none.
func (n *topicNames) colliding(name string) string {
	if !strings.ContainsAny(name, "._") {
		return ""
	}
	if n.unified == nil {
		n.unified = map[string]string{}
		for _, t := range n.img.Topics().Names() {
			n.unified[unifyTopicName(t)] = t
		}
		for t := range n.created {
			n.unified[unifyTopicName(t)] = t
		}
	}
	if other, ok := n.unified[unifyTopicName(name)]; ok && other != name {
		return other
	}
	return ""
}

// randomTopicID is Kafka's Uuid.randomUuid: never a reserved id, and never
// one whose text starts with '-' (it would read as a command-line flag).
func randomTopicID(r *mrand.Rand) record.Uuid {
	for {
		var u record.Uuid
		if r != nil {
			binary.BigEndian.PutUint64(u[:8], r.Uint64())
			binary.BigEndian.PutUint64(u[8:], r.Uint64())
		} else {
			_, _ = rand.Read(u[:]) // crypto/rand.Read never fails
		}
		if u != record.ZeroUuid && u != record.MetadataTopicID && !reservedDirectory(u) && u.String()[0] != '-' {
			return u
		}
	}
}
