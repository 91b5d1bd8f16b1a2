package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/kraftlab/kraftlab/cluster"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/storage"
)

// MetadataImage implements Engine.
func (e *engine) MetadataImage(id int32) (*image.MetadataImage, error) {
	n, err := e.node(id)
	if err != nil {
		return nil, err
	}
	if !n.srv.Running() {
		return nil, cluster.Errorf(cluster.ErrNodeState, "node %d is not running", id)
	}
	if b := n.srv.ZkBrokerServer(); b != nil {
		return b.Image(), nil
	}
	l := n.srv.Loader()
	if l == nil {
		return nil, cluster.Errorf(cluster.ErrNodeState, "node %d has no metadata loader yet", id)
	}
	return l.Image(), nil
}

// ReadMetadataLog implements Engine: one read through the node's raft
// client, from the log start when offset is below it.
func (e *engine) ReadMetadataLog(ctx context.Context, id int32, offset int64, maxBytes int) (cluster.MetadataLogRead, error) {
	n, err := e.node(id)
	if err != nil {
		return cluster.MetadataLogRead{}, err
	}
	if n.q == nil {
		return cluster.MetadataLogRead{}, cluster.Errorf(cluster.ErrBadAction, "node %d has no metadata log: in zk mode the controller pushes the metadata", id)
	}
	// The log start can move (a snapshot) between the status and the
	// read: then read again from the new start.
	for range 3 {
		st := n.q.Status()
		r := cluster.MetadataLogRead{LogStartOffset: st.LogStartOffset, LogEndOffset: st.LogEndOffset}
		if st.HasSnapshot {
			s := st.LatestSnapshot
			r.LatestSnapshot = &s
		}
		if offset >= st.LogEndOffset {
			// Nothing there yet: an empty read, as at the log end.
			r.HighWatermark = st.HighWatermark
			return r, nil
		}
		raw, hwm, err := n.q.ReadLog(ctx, max(offset, st.LogStartOffset), maxBytes)
		if errors.Is(err, storage.ErrOffsetOutOfRange) {
			continue
		}
		if err != nil {
			return cluster.MetadataLogRead{}, stateError(err)
		}
		r.Raw, r.HighWatermark = raw, hwm
		return r, nil
	}
	return cluster.MetadataLogRead{}, fmt.Errorf("read the metadata log of node %d: its log start kept moving", id)
}
