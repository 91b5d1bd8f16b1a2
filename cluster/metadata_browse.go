package cluster

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/image/node"
)

// MetadataEntry is one node of a node's metadata tree, as
// kafka-metadata-shell shows it: a directory lists its children (ls), a
// file prints its text (cat).
type MetadataEntry struct {
	// NodeID is the node whose image was browsed.
	NodeID int32 `json:"nodeId"`
	// Path is the entry's absolute path, cleaned ("/image/topics").
	Path      string   `json:"path"`
	Directory bool     `json:"directory"`
	Children  []string `json:"children,omitempty"`
	Text      string   `json:"text,omitempty"`
	// Offset is the last offset the image holds, -1 for an empty image:
	// what the node had applied when it was read.
	Offset int64 `json:"offset"`
}

// MetadataBrowser is an Operator that can also show a node's metadata as
// Kafka's own tools do. *Playground implements it in process and
// control.Client over the control socket.
type MetadataBrowser interface {
	// BrowseMetadata returns the entry at p (absolute, "/" by default) of
	// the image node n's loader last published.
	BrowseMetadata(ctx context.Context, n condition.NodeRef, p string) (MetadataEntry, error)
	// MetadataLog returns node n's metadata log from offset from (its log
	// start when below it), up to about maxBytes of whole batches.
	MetadataLog(ctx context.Context, n condition.NodeRef, from int64, maxBytes int) (MetadataLog, error)
}

// MaxMetadataPath bounds a metadata path: the longest real one (a config
// key under a topic's resource) is a few hundred bytes.
const MaxMetadataPath = 1024

// BrowseMetadata implements MetadataBrowser. A missing path is ErrBadAction
// naming the missing part and the children of the deepest part that exists.
func (p *Playground) BrowseMetadata(_ context.Context, ref condition.NodeRef, at string) (MetadataEntry, error) {
	if p.closed.Load() {
		return MetadataEntry{}, ErrClosed
	}
	id, err := p.liveNode(ref)
	if err != nil {
		return MetadataEntry{}, err
	}
	img, err := p.engine.MetadataImage(id)
	if err != nil {
		return MetadataEntry{}, fmt.Errorf("metadata of node %d: %w", id, err)
	}
	return browse(id, img, at)
}

// liveNode resolves ref to a node that runs: a stopped node has no loader
// to read.
func (p *Playground) liveNode(ref condition.NodeRef) (int32, error) {
	if ref.IsZero() {
		ref = condition.LeaderRef()
	}
	v := p.View()
	id, err := ref.Resolve(&v)
	if err != nil {
		return 0, err
	}
	if n, ok := v.Node(id); ok && !n.Live() {
		return 0, Errorf(ErrNodeState, "node %d is %s: only a running node has a metadata image and log to read; start it with: kraftlab start %d", id, n.State, id)
	}
	return id, nil
}

// browse finds at in img's tree.
func browse(id int32, img *image.MetadataImage, at string) (MetadataEntry, error) {
	if len(at) > MaxMetadataPath {
		return MetadataEntry{}, Errorf(ErrBadAction, "metadata path of %d bytes: at most %d", len(at), MaxMetadataPath)
	}
	if at == "" {
		at = "/"
	}
	if !strings.HasPrefix(at, "/") {
		at = "/" + at
	}
	root := node.Root(img)
	n, err := node.Find(root, at)
	if err != nil {
		return MetadataEntry{}, missing(root, at)
	}
	e := MetadataEntry{NodeID: id, Path: path.Clean(at), Directory: n.IsDirectory(), Offset: img.Provenance().LastContainedOffset}
	if e.Directory {
		e.Children = node.List(n)
	} else {
		e.Text = node.Cat(n)
	}
	return e, nil
}

// missing explains why at is not in the tree: the first component that is
// not there, and what its parent holds instead.
func missing(root node.Node, at string) error {
	parent := "/"
	for _, c := range strings.Split(path.Clean(at), "/") {
		if c == "" {
			continue
		}
		next := path.Join(parent, c)
		if _, err := node.Find(root, next); err == nil {
			parent = path.Clean(next)
			continue
		}
		dir, _ := node.Find(root, parent)
		if dir == nil || !dir.IsDirectory() {
			return Errorf(ErrBadAction, "no metadata path %s: %s is a file (kraftlab metadata %s prints it)", at, parent, parent)
		}
		kids := node.List(dir)
		if len(kids) == 0 {
			return Errorf(ErrBadAction, "no metadata path %s: %s has no %s, and is empty", at, parent, c)
		}
		return Errorf(ErrBadAction, "no metadata path %s: %s has no %s; it holds: %s", at, parent, c, strings.Join(kids, ", "))
	}
	return Errorf(ErrBadAction, "no metadata path %s", at)
}
