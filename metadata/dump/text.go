package dump

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// WriteText prints d as kafka-dump-log --cluster-metadata-decoder prints a
// file: "Dumping FILE" and the header line when d came from a file, a line
// per batch, a line per record, and the count of invalid bytes at the end.
func (d *Dump) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if d.File != "" {
		fmt.Fprintf(bw, "Dumping %s\n", d.File)
	}
	if d.Header != "" {
		fmt.Fprintln(bw, d.Header)
	}
	for i := range d.Batches {
		d.Batches[i].appendText(bw)
	}
	if d.InvalidBytes > 0 {
		name := d.File
		if name == "" {
			name = "the bytes read"
		}
		fmt.Fprintf(bw, "Found %d invalid bytes at the end of %s\n", d.InvalidBytes, baseName(name))
		if d.Invalid != "" {
			fmt.Fprintf(bw, "  %s\n", d.Invalid)
		}
	}
	return bw.Flush()
}

// baseName is the file's last path element, as Kafka's File.getName.
func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Text is the batch's lines as kafka-dump-log prints them.
func (b *Batch) Text() string {
	var s strings.Builder
	bw := bufio.NewWriter(&s)
	b.appendText(bw)
	bw.Flush()
	return s.String()
}

func (b *Batch) appendText(w *bufio.Writer) {
	horizon := "OptionalLong.empty"
	if b.DeleteHorizonMs != nil {
		horizon = fmt.Sprintf("OptionalLong[%d]", *b.DeleteHorizonMs)
	}
	fmt.Fprintf(w, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t deleteHorizonMs: %s position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: true\n",
		b.BaseOffset, b.LastOffset, b.Count, b.BaseSequence, b.LastSequence, b.ProducerID, b.ProducerEpoch,
		b.PartitionLeaderEpoch, b.IsTransactional, b.IsControl, horizon, b.Position, b.TimestampType, b.Timestamp,
		b.Size, b.Magic, b.CompressCodec, b.CRC)
	for i := range b.Records {
		b.Records[i].appendText(w, b.TimestampType)
	}
	if b.Error != "" {
		fmt.Fprintf(w, "| error: %s\n", b.Error)
	}
}

// appendText prints "| offset: … headerKeys: [] " then the payload or the
// control message, as DumpLogSegments.printRecordMetadata and
// printRecordContents do.
func (r *Record) appendText(w *bufio.Writer, timestampType string) {
	fmt.Fprintf(w, "| offset: %d %s: %d keySize: %d valueSize: %d sequence: %d headerKeys: [%s]",
		r.Offset, timestampType, r.Timestamp, r.KeySize, r.ValueSize, r.Sequence, strings.Join(r.HeaderKeys, ","))
	switch r.Control {
	case "":
		if r.Error != "" {
			fmt.Fprintf(w, " payload: Error at %d, skipping. %s\n", r.Offset, r.Error)
		} else {
			fmt.Fprintf(w, " payload: %s\n", r.Payload())
		}
		return
	case ControlLeaderChange:
		w.WriteString(" LeaderChange: ")
	case ControlAbort, ControlCommit:
		var m struct{ CoordinatorEpoch int32 }
		if r.Error == "" && json.Unmarshal(r.Data, &m) == nil {
			// Kafka prints the marker's one field bare, not as JSON.
			fmt.Fprintf(w, " endTxnMarker: %s coordinatorEpoch: %d\n", r.Control, m.CoordinatorEpoch)
			return
		}
		fmt.Fprintf(w, " endTxnMarker: %s ", r.Control)
	case ControlSnapshotHeader, ControlSnapshotFooter, ControlKRaftVersion, ControlKRaftVoters:
		fmt.Fprintf(w, " %s ", r.Control)
	default:
		fmt.Fprintf(w, " controlType: %s\n", r.Control)
		return
	}
	if r.Error != "" {
		fmt.Fprintf(w, "error: %s\n", r.Error)
		return
	}
	fmt.Fprintf(w, "%s\n", r.Data)
}

// Payload is a metadata record's payload as kafka-dump-log prints it:
// {"type":"TOPIC_RECORD","version":0,"data":{…}}; nil for a control record
// or one that did not decode.
func (r *Record) Payload() []byte {
	if r.Type == "" || r.Version == nil || r.Data == nil {
		return nil
	}
	var w record.JSONWriter
	w.Begin()
	w.Key("type")
	w.String(r.Type)
	w.Key("version")
	w.Int(int64(*r.Version))
	w.Key("data")
	w.Raw(r.Data)
	w.End()
	return w.Bytes()
}
