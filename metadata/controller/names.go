package controller

import (
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// maxTopicNameLength is Kafka's Topic.MAX_NAME_LENGTH.
const maxTopicNameLength = 249

// validateTopicName is Kafka's Topic.validate.
func validateTopicName(name string) error {
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

// collidingTopic is an existing topic whose name collides with name, "" if
// none.
func collidingTopic(img *image.MetadataImage, name string) string {
	if !strings.ContainsAny(name, "._") {
		return ""
	}
	u := unifyTopicName(name)
	for _, n := range img.Topics().Names() {
		if n != name && unifyTopicName(n) == u {
			return n
		}
	}
	return ""
}

// randomTopicID is Kafka's Uuid.randomUuid: never a reserved id, and never
// one whose text starts with '-' (it would read as a command-line flag).
func randomTopicID() record.Uuid {
	for {
		var u record.Uuid
		_, _ = rand.Read(u[:]) // crypto/rand.Read never fails
		if u != record.ZeroUuid && u != record.MetadataTopicID && !reservedDirectory(u) && u.String()[0] != '-' {
			return u
		}
	}
}
