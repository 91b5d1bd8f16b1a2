package image

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// ScramCredential is one user's SCRAM credential for one mechanism
// (Kafka's ScramCredentialData). It is immutable.
type ScramCredential struct {
	Salt, StoredKey, ServerKey []byte
	Iterations                 int32
}

// Equal reports whether two credentials are the same.
func (c *ScramCredential) Equal(o *ScramCredential) bool {
	return bytes.Equal(c.Salt, o.Salt) && bytes.Equal(c.StoredKey, o.StoredKey) &&
		bytes.Equal(c.ServerKey, o.ServerKey) && c.Iterations == o.Iterations
}

// ScramImage holds the SCRAM credentials by mechanism and user name
// (Kafka's ScramImage). kraftlab's own controllers write none (its nodes
// authenticate with the playground's member secret); a Kafka controller
// formatted with --add-scram writes them in its bootstrap transaction.
type ScramImage struct {
	mechanisms map[int8]map[string]*ScramCredential
}

var emptyScram = &ScramImage{mechanisms: map[int8]map[string]*ScramCredential{}}

// Credential returns user's credential for mechanism, nil if none.
func (s *ScramImage) Credential(mechanism int8, user string) *ScramCredential {
	return s.mechanisms[mechanism][user]
}

// Users lists the users with a credential for mechanism, sorted.
func (s *ScramImage) Users(mechanism int8) []string {
	return slices.Sorted(maps.Keys(s.mechanisms[mechanism]))
}

// IsEmpty reports whether no credential is stored.
func (s *ScramImage) IsEmpty() bool { return len(s.mechanisms) == 0 }

// Equal reports whether two images hold the same credentials.
func (s *ScramImage) Equal(o *ScramImage) bool {
	return maps.EqualFunc(s.mechanisms, o.mechanisms, func(a, b map[string]*ScramCredential) bool {
		return maps.EqualFunc(a, b, (*ScramCredential).Equal)
	})
}

// records states the credentials, by mechanism and user.
func (s *ScramImage) records() []record.Record {
	var out []record.Record
	for _, m := range slices.Sorted(maps.Keys(s.mechanisms)) {
		for _, u := range s.Users(m) {
			c := s.mechanisms[m][u]
			out = append(out, &record.UserScramCredentialRecord{Name: u, Mechanism: m,
				Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations})
		}
	}
	return out
}

// scramKey names one user's credential for one mechanism.
type scramKey struct {
	mechanism int8
	user      string
}

// ScramDelta collects credential changes.
type ScramDelta struct {
	image   *ScramImage
	changed map[scramKey]*ScramCredential // nil: removed
}

func newScramDelta(img *ScramImage) *ScramDelta {
	return &ScramDelta{image: img, changed: map[scramKey]*ScramCredential{}}
}

// checkMechanism refuses a mechanism Kafka does not know. (Kafka's
// ScramMechanism.fromType files it under UNKNOWN, which no snapshot can
// write back as it came.)
func checkMechanism(m int8) error {
	if m != record.ScramSHA256 && m != record.ScramSHA512 {
		return fmt.Errorf("unknown SCRAM mechanism %d", m)
	}
	return nil
}

func (d *ScramDelta) replay(r *record.UserScramCredentialRecord) error {
	if err := checkMechanism(r.Mechanism); err != nil {
		return err
	}
	d.changed[scramKey{r.Mechanism, r.Name}] = &ScramCredential{Salt: r.Salt, StoredKey: r.StoredKey, ServerKey: r.ServerKey, Iterations: r.Iterations}
	return nil
}

// replayRemove deletes a credential; as in Kafka, one that is not there is
// no error.
func (d *ScramDelta) replayRemove(r *record.RemoveUserScramCredentialRecord) error {
	if err := checkMechanism(r.Mechanism); err != nil {
		return err
	}
	d.changed[scramKey{r.Mechanism, r.Name}] = nil
	return nil
}

func (d *ScramDelta) finishSnapshot() {
	for m, users := range d.image.mechanisms {
		for u := range users {
			if _, ok := d.changed[scramKey{m, u}]; !ok {
				d.changed[scramKey{m, u}] = nil
			}
		}
	}
}

func (d *ScramDelta) apply() *ScramImage {
	next := maps.Clone(d.image.mechanisms)
	cloned := map[int8]bool{}
	for k, c := range d.changed {
		users := next[k.mechanism]
		if !cloned[k.mechanism] {
			users = maps.Clone(users)
			if users == nil {
				users = map[string]*ScramCredential{}
			}
			cloned[k.mechanism] = true
		}
		if c == nil {
			delete(users, k.user)
		} else {
			users[k.user] = c
		}
		next[k.mechanism] = users
	}
	for m, users := range next {
		if len(users) == 0 {
			delete(next, m)
		}
	}
	return &ScramImage{mechanisms: next}
}
