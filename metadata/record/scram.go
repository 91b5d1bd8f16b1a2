package record

// SCRAM mechanisms by type (Kafka's ScramMechanism).
const (
	ScramSHA256 int8 = 1
	ScramSHA512 int8 = 2
)

// UserScramCredentialRecord (apiKey 11, version 0) stores a user's SCRAM
// credential for one mechanism: what kafka-storage format --add-scram and
// AlterUserScramCredentials write, and what a Kafka controller's listener
// authenticates SCRAM clients (a kraftlab raft client among them) against.
type UserScramCredentialRecord struct {
	Version   int16
	Name      string
	Mechanism int8
	Salt      []byte
	StoredKey []byte
	ServerKey []byte
	// Iterations is the SCRAM iteration count.
	Iterations int32
}

// APIKey is KeyUserScramCredential.
func (*UserScramCredentialRecord) APIKey() APIKey { return KeyUserScramCredential }

// RecordVersion is r.Version.
func (r *UserScramCredentialRecord) RecordVersion() int16 { return r.Version }

func (r *UserScramCredentialRecord) encode(w *writer) {
	w.string("Name", r.Name)
	w.int8(r.Mechanism)
	w.bytes(r.Salt)
	w.bytes(r.StoredKey)
	w.bytes(r.ServerKey)
	w.int32(r.Iterations)
	w.uvarint(0)
}

func (r *UserScramCredentialRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.Name = rd.string("Name")
	r.Mechanism = rd.int8()
	r.Salt = rd.bytes("Salt")
	r.StoredKey = rd.bytes("StoredKey")
	r.ServerKey = rd.bytes("ServerKey")
	r.Iterations = rd.int32()
	rd.noTags()
}

// RemoveUserScramCredentialRecord (apiKey 22, version 0) deletes a user's
// credential for one mechanism.
type RemoveUserScramCredentialRecord struct {
	Version   int16
	Name      string
	Mechanism int8
}

// APIKey is KeyRemoveUserScramCredential.
func (*RemoveUserScramCredentialRecord) APIKey() APIKey { return KeyRemoveUserScramCredential }

// RecordVersion is r.Version.
func (r *RemoveUserScramCredentialRecord) RecordVersion() int16 { return r.Version }

func (r *RemoveUserScramCredentialRecord) encode(w *writer) {
	w.string("Name", r.Name)
	w.int8(r.Mechanism)
	w.uvarint(0)
}

func (r *RemoveUserScramCredentialRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.Name = rd.string("Name")
	r.Mechanism = rd.int8()
	rd.noTags()
}

// bytes writes a compact, non-nullable byte array.
func (w *writer) bytes(b []byte) {
	w.uvarint(uint32(len(b)) + 1)
	w.b = append(w.b, b...)
}

// bytes reads a compact, non-nullable byte array into a slice of its own
// (an empty one is non-nil).
func (r *reader) bytes(field string) []byte {
	n, ok := r.compactLen()
	if r.err != nil {
		return nil
	}
	if !ok {
		r.fail("non-nullable field %s was serialized as null", field)
		return nil
	}
	p := r.take(n)
	if p == nil {
		return nil
	}
	return append([]byte{}, p...)
}
