package partition

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// metadataFileName is the file Kafka keeps a partition's topic id in
// (PartitionMetadataFile), so that a directory left by a deleted topic of
// the same name is never taken for the new topic's.
const metadataFileName = "partition.metadata"

// encodeTopicID writes an id as Kafka's Uuid.toString does: URL-safe
// base64 without padding.
func encodeTopicID(id [16]byte) string {
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// readPartitionMetadata reads the topic id from dir's partition.metadata;
// ok is false when there is no such file.
func readPartitionMetadata(dir string) (id [16]byte, ok bool, err error) {
	path := filepath.Join(dir, metadataFileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return id, false, nil
	}
	if err != nil {
		return id, false, err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) != 2 || strings.TrimSpace(lines[0]) != "version: 0" {
		return id, false, fmt.Errorf("%s: want %q and a topic_id line", path, "version: 0")
	}
	v, found := strings.CutPrefix(lines[1], "topic_id: ")
	if !found {
		return id, false, fmt.Errorf("%s: second line %q is not a topic_id", path, lines[1])
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil || len(raw) != len(id) {
		return id, false, fmt.Errorf("%s: topic_id %q is not a topic id", path, v)
	}
	copy(id[:], raw)
	return id, true, nil
}

// writePartitionMetadata writes partition.metadata durably: a temporary
// file fsynced, renamed over the file, and the directory fsynced.
func writePartitionMetadata(dir string, id [16]byte) error {
	path := filepath.Join(dir, metadataFileName)
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "version: 0\ntopic_id: %s\n", encodeTopicID(id))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
