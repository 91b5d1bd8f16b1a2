package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// writeFileAtomic replaces dir/name with data so that a crash leaves either
// the old or the new content, never a mix: it writes name.tmp, fsyncs it,
// renames it over name and fsyncs dir. Without sync it skips both fsyncs,
// which keeps the replacement atomic against a process kill only.
func writeFileAtomic(dir, name string, data []byte, sync bool) error {
	return writeFileAtomicOn(OS, dir, name, data, sync)
}

// writeFileAtomicOn is writeFileAtomic writing through disk. A failed
// write leaves the old content, and removes name.tmp.
func writeFileAtomicOn(disk Disk, dir, name string, data []byte, sync bool) error {
	path := filepath.Join(dir, name)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = disk.WriteAt(f, data, 0)
	if err == nil && sync {
		err = disk.Sync(f)
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
	if sync {
		if err := syncDir(dir); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}

// syncDir fsyncs a directory so that the names created, renamed or removed
// in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// Kafka's checkpoint files (leader-epoch-checkpoint and friends) are text: a
// version line, a count line, then that many entry lines.
const checkpointVersion = 0

func formatCheckpoint(lines []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n%d\n", checkpointVersion, len(lines))
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// parseCheckpoint returns the entry lines of a checkpoint file, each split
// into want fields.
func parseCheckpoint(data []byte, want int) ([][]string, error) {
	text := string(data)
	if !strings.HasSuffix(text, "\n") {
		return nil, errors.New("no final newline")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 2 {
		return nil, errors.New("missing version or count line")
	}
	if lines[0] != strconv.Itoa(checkpointVersion) {
		return nil, fmt.Errorf("version %q, want %d", lines[0], checkpointVersion)
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n != len(lines)-2 {
		return nil, fmt.Errorf("count %q for %d entries", lines[1], len(lines)-2)
	}
	out := make([][]string, 0, n)
	for i, l := range lines[2:] {
		f := strings.Split(l, " ")
		if len(f) != want {
			return nil, fmt.Errorf("entry %d %q: want %d fields", i, l, want)
		}
		out = append(out, f)
	}
	return out, nil
}

const logStartFile = "log-start-offset-checkpoint"

// readLogStart returns the log start offset recorded in dir, or -1 if none is.
func readLogStart(dir string) (int64, error) {
	path := filepath.Join(dir, logStartFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return -1, err
	}
	entries, err := parseCheckpoint(data, 1)
	if err == nil && len(entries) != 1 {
		err = fmt.Errorf("%d entries, want 1", len(entries))
	}
	var off int64
	if err == nil {
		off, err = strconv.ParseInt(entries[0][0], 10, 64)
	}
	if err == nil && off < 0 {
		err = fmt.Errorf("negative offset %d", off)
	}
	if err != nil {
		return -1, fmt.Errorf("%s: %w", path, err)
	}
	return off, nil
}

func writeLogStart(disk Disk, dir string, off int64, sync bool) error {
	return writeFileAtomicOn(disk, dir, logStartFile, formatCheckpoint([]string{strconv.FormatInt(off, 10)}), sync)
}
