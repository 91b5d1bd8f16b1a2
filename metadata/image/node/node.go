package node

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kraftlab/kraftlab/metadata/image"
)

// Node is one node of the metadata tree (Kafka's MetadataNode): a
// directory, with children, or a file, which prints text.
type Node interface {
	// IsDirectory reports whether the node has children rather than text.
	IsDirectory() bool
	// ChildNames lists the children's names, in no particular order.
	ChildNames() []string
	// Child returns the child named name, nil if there is none.
	Child(name string) Node
	// Print walks the node: a file outputs its text, a directory enters
	// each child in name order.
	Print(p Printer)
}

// Errors of Find, wrapped with the path.
var (
	ErrNoSuchNode   = errors.New("no such node")
	ErrNotDirectory = errors.New("not a directory")
)

// dir is the part of Node every directory shares.
type dir struct{}

func (dir) IsDirectory() bool { return true }

// printChildren is MetadataNode.print's default: children sorted by name.
func printChildren(n Node, p Printer) {
	for _, name := range List(n) {
		p.EnterNode(name)
		if c := n.Child(name); c != nil {
			c.Print(p)
		}
		p.LeaveNode()
	}
}

// leaf is a file with fixed text (Kafka's MetadataLeafNode).
type leaf string

func (leaf) IsDirectory() bool            { return false }
func (leaf) ChildNames() []string         { return nil }
func (leaf) Child(string) Node            { return nil }
func (l leaf) Print(p Printer)            { p.Output(string(l)) }
func (l leaf) String() string             { return string(l) }
func leafOf(format string, a ...any) leaf { return leaf(fmt.Sprintf(format, a...)) }

// root is the shell's root: "image" (kafka-metadata-shell's RootShellNode
// also has "local", the shell's own version, which kraftlab leaves out).
type root struct {
	dir
	img *image.MetadataImage
}

// Root is the root of the tree over img.
func Root(img *image.MetadataImage) Node { return root{img: img} }

func (root) ChildNames() []string { return []string{imageName} }

func (r root) Child(name string) Node {
	if name == imageName {
		return imageNode{img: r.img}
	}
	return nil
}

func (r root) Print(p Printer) { printChildren(r, p) }

// Find walks path from root: components separated by "/", "." staying and
// ".." going up (never above root), as the shell resolves a path from "/".
// A missing component is ErrNoSuchNode and one below a file ErrNotDirectory,
// the error naming the path up to that component.
func Find(root Node, path string) (Node, error) {
	stack := []Node{root}
	var names []string
	for _, part := range strings.Split(path, "/") {
		switch part {
		case "", ".":
			continue
		case "..":
			if len(stack) > 1 {
				stack, names = stack[:len(stack)-1], names[:len(names)-1]
			}
			continue
		}
		cur := stack[len(stack)-1]
		at := "/" + strings.Join(append(names, part), "/")
		if !cur.IsDirectory() {
			return nil, fmt.Errorf("%w: /%s", ErrNotDirectory, strings.Join(names, "/"))
		}
		next := cur.Child(part)
		if next == nil {
			return nil, fmt.Errorf("%w: %s", ErrNoSuchNode, at)
		}
		stack, names = append(stack, next), append(names, part)
	}
	return stack[len(stack)-1], nil
}

// List is a directory's child names sorted as the shell's ls prints them
// (String.compareTo order); nil for a file.
func List(n Node) []string {
	if !n.IsDirectory() {
		return nil
	}
	names := slices.Clone(n.ChildNames())
	slices.Sort(names)
	return names
}
