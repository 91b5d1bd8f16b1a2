package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// cleanShutdownFile marks a broker's log directory as shut down cleanly,
// with the broker epoch it had (Kafka's CleanShutdownFileHandler). The
// next incarnation reads the epoch, deletes the file before it serves so
// that a crash from then on counts as unclean, and registers with it as
// PreviousBrokerEpoch: the controller tells a clean shutdown from an
// unclean one by it, and with ELR on an unclean one leaves every ELR.
const cleanShutdownFile = ".kafka_cleanshutdown"

// maxCleanShutdownSize bounds what reading the marker may hold.
const maxCleanShutdownSize = 4 << 10

type cleanShutdown struct {
	Version     int    `json:"version"`
	BrokerEpoch *int64 `json:"brokerEpoch"`
}

// writeCleanShutdown writes the marker in dir with epoch, synced.
func writeCleanShutdown(dir string, epoch int64) error {
	b, err := json.Marshal(cleanShutdown{Version: 0, BrokerEpoch: &epoch})
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, cleanShutdownFile))
	if err != nil {
		return fmt.Errorf("clean shutdown marker: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("clean shutdown marker: %w", err)
	}
	return nil
}

// takeCleanShutdown reads and deletes dir's marker: the epoch of the last
// incarnation if it shut down cleanly, -1 if there is no marker or it
// cannot be read (as Kafka treats an unreadable one).
func takeCleanShutdown(dir string) (int64, error) {
	path := filepath.Join(dir, cleanShutdownFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return -1, fmt.Errorf("clean shutdown marker: %w", err)
	}
	b, rerr := io.ReadAll(io.LimitReader(f, maxCleanShutdownSize+1))
	f.Close()
	if err := os.Remove(path); err != nil {
		return -1, fmt.Errorf("clean shutdown marker: %w", err)
	}
	var c cleanShutdown
	if rerr != nil || len(b) > maxCleanShutdownSize || json.Unmarshal(b, &c) != nil || c.BrokerEpoch == nil {
		return -1, nil
	}
	return *c.BrokerEpoch, nil
}
