package record

// BeginTransactionRecord (apiKey 23, version 0) opens a metadata
// transaction (KIP-868): the records up to the matching
// EndTransactionRecord are applied as one unit, or not at all if an
// AbortTransactionRecord comes first. Kafka's controller writes its
// bootstrap records, and any change too big for one batch, inside one.
type BeginTransactionRecord struct {
	Version int16
	// Name describes the transaction, nil (null, the default) if it has no
	// description (tag 0).
	Name *string
}

// APIKey is KeyBeginTransaction.
func (*BeginTransactionRecord) APIKey() APIKey { return KeyBeginTransaction }

// RecordVersion is r.Version.
func (r *BeginTransactionRecord) RecordVersion() int16 { return r.Version }

func (r *BeginTransactionRecord) encode(w *writer) { w.optionalText(r.Name) }

func (r *BeginTransactionRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.Name = rd.optionalText("Name")
}

// EndTransactionRecord (apiKey 24, version 0) commits the open metadata
// transaction.
type EndTransactionRecord struct {
	Version int16
}

// APIKey is KeyEndTransaction.
func (*EndTransactionRecord) APIKey() APIKey { return KeyEndTransaction }

// RecordVersion is r.Version.
func (r *EndTransactionRecord) RecordVersion() int16 { return r.Version }

func (r *EndTransactionRecord) encode(w *writer) { w.uvarint(0) }

func (r *EndTransactionRecord) decode(rd *reader, v int16) {
	r.Version = v
	rd.noTags()
}

// AbortTransactionRecord (apiKey 25, version 0) abandons the open metadata
// transaction: what it replayed is discarded. A newly elected Kafka
// controller writes one when the log ends inside a transaction its
// predecessor did not finish.
type AbortTransactionRecord struct {
	Version int16
	// Reason says why, nil (null, the default) if no reason was given
	// (tag 0).
	Reason *string
}

// APIKey is KeyAbortTransaction.
func (*AbortTransactionRecord) APIKey() APIKey { return KeyAbortTransaction }

// RecordVersion is r.Version.
func (r *AbortTransactionRecord) RecordVersion() int16 { return r.Version }

func (r *AbortTransactionRecord) encode(w *writer) { w.optionalText(r.Reason) }

func (r *AbortTransactionRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.Reason = rd.optionalText("Reason")
}

// optionalText writes the tagged-field section of a struct whose only
// field is a nullable string at tag 0, left out when null (its default).
func (w *writer) optionalText(s *string) {
	if s == nil {
		w.uvarint(0)
		return
	}
	w.uvarint(1)
	w.tagHeader(0, nullableStringSize(s))
	w.nullableString("tag 0", s)
}

// optionalText reads the tagged-field section optionalText writes.
func (r *reader) optionalText(field string) *string {
	var s *string
	r.tags(func(tag uint32, f *reader) bool {
		if tag != 0 {
			return false
		}
		s = f.nullableString(field)
		return true
	})
	return s
}

// nullableStringSize is the encoded size of a compact nullable string.
func nullableStringSize(s *string) int {
	if s == nil {
		return 1
	}
	return uvarintSize(uint32(len(*s))+1) + len(*s)
}
