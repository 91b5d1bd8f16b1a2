package server

import (
	"fmt"
	"path/filepath"
)

// NodeDir is node id's folder under a cluster's data folder, one per node
// as Kafka's log.dirs are: the metadata log lives in
// NodeDir/__cluster_metadata-0.
func NodeDir(dataDir string, id int32) string {
	return filepath.Join(dataDir, fmt.Sprintf("node-%d", id))
}
