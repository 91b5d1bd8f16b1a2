package engine

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kraftlab/kraftlab/server"
)

// loadClusterID returns the cluster ID the nodes' folders under dir
// already carry in their meta.properties, or a new one, and writes
// meta.properties into every node's folder that lacks it. Folders of
// different clusters, or a folder of another node, are an error: the
// quorum would refuse their requests anyway (INCONSISTENT_CLUSTER_ID).
func loadClusterID(dir string, ids []int32) (string, error) {
	var clusterID, from string
	for _, id := range ids {
		path := filepath.Join(server.NodeDir(dir, id), server.MetaPropertiesFile)
		m, err := server.ReadMetaProperties(server.NodeDir(dir, id))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if m.NodeID != id {
			return "", fmt.Errorf("%s says node.id=%d, but the folder is node %d's", path, m.NodeID, id)
		}
		cid := m.ClusterID
		if clusterID != "" && cid != clusterID {
			return "", fmt.Errorf("the data folder %s mixes clusters: %s has cluster.id=%s, %s has %s", dir, path, cid, from, clusterID)
		}
		clusterID, from = cid, path
	}
	if clusterID == "" {
		clusterID = newClusterID()
	}
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(server.NodeDir(dir, id), server.MetaPropertiesFile)); err == nil {
			continue
		}
		if err := writeMetaProperties(dir, id, clusterID); err != nil {
			return "", err
		}
	}
	return clusterID, nil
}

// writeMetaProperties formats node id's folder under dir for the cluster,
// as kafka-storage format does.
func writeMetaProperties(dir string, id int32, clusterID string) error {
	return server.Format(server.NodeDir(dir, id), clusterID, id)
}

// newClusterID returns a random cluster ID in Kafka's format (Uuid's
// toString: 16 random bytes, URL-safe base64 without padding).
func newClusterID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
