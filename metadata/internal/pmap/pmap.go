// Package pmap is a persistent hash map: a hash array mapped trie (Bagwell)
// whose updates return a new map sharing every untouched node with the old
// one, so a change costs O(log32 n) new nodes, never a copy of the map.
// Kafka's image uses pcollections' HAMT for the same purpose.
//
// A Builder makes many changes in place on nodes it created itself (the
// "transient" of Clojure's collections), so building a map of n entries
// costs O(n) rather than O(n log n) garbage; nodes of a map it has handed
// out are never changed.
package pmap

import (
	"iter"
	"math/bits"
)

const (
	bitsPerLevel = 5
	fanout       = 1 << bitsPerLevel
	hashBits     = 64
)

// Map is an immutable hash map from K to V. The zero Map is not usable:
// make one with New. Maps are values; Set and Delete return new ones.
type Map[K comparable, V any] struct {
	root *node[K, V]
	size int
	hash func(K) uint64
}

// node is a bitmap-indexed node: one item per set bit of bitmap, in slot
// order. Beyond the 64 bits of the hash, a node is a collision node: its
// items all share one hash and are searched in turn.
type node[K comparable, V any] struct {
	owner  *byte // the Builder allowed to change this node in place; nil if none
	bitmap uint32
	items  []item[K, V]
}

// item is an entry (sub == nil) or a subtree.
type item[K comparable, V any] struct {
	hash uint64
	key  K
	val  V
	sub  *node[K, V]
}

// New returns an empty map keyed with hash. Equal keys must hash equally;
// colliding hashes are correct, only slower.
func New[K comparable, V any](hash func(K) uint64) Map[K, V] {
	return Map[K, V]{hash: hash}
}

// Len is the number of entries.
func (m Map[K, V]) Len() int { return m.size }

// Get returns the value for k.
func (m Map[K, V]) Get(k K) (V, bool) {
	n := m.root
	if n == nil {
		var zero V
		return zero, false
	}
	h := m.hash(k)
	for shift := uint(0); ; shift += bitsPerLevel {
		if shift >= hashBits {
			for i := range n.items {
				if n.items[i].key == k {
					return n.items[i].val, true
				}
			}
			break
		}
		bit := uint32(1) << ((h >> shift) & (fanout - 1))
		if n.bitmap&bit == 0 {
			break
		}
		it := &n.items[bits.OnesCount32(n.bitmap&(bit-1))]
		if it.sub != nil {
			n = it.sub
			continue
		}
		if it.hash == h && it.key == k {
			return it.val, true
		}
		break
	}
	var zero V
	return zero, false
}

// Set returns a map with k set to v.
func (m Map[K, V]) Set(k K, v V) Map[K, V] {
	h := m.hash(k)
	root, added := set(m.root, item[K, V]{hash: h, key: k, val: v}, 0, nil)
	m.root = root
	if added {
		m.size++
	}
	return m
}

// Delete returns a map without k.
func (m Map[K, V]) Delete(k K) Map[K, V] {
	if m.root == nil {
		return m
	}
	root, removed := del(m.root, m.hash(k), k, 0, nil)
	if removed {
		m.root = root
		m.size--
	}
	return m
}

// All yields every entry, in an order that depends on the hashes.
func (m Map[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if m.root != nil {
			walk(m.root, yield)
		}
	}
}

func walk[K comparable, V any](n *node[K, V], yield func(K, V) bool) bool {
	for i := range n.items {
		it := &n.items[i]
		if it.sub != nil {
			if !walk(it.sub, yield) {
				return false
			}
		} else if !yield(it.key, it.val) {
			return false
		}
	}
	return true
}

// editable returns n itself if owner may change it, else a copy owned by
// owner with room for extra more items.
func editable[K comparable, V any](n *node[K, V], owner *byte, extra int) *node[K, V] {
	if owner != nil && n.owner == owner {
		return n
	}
	c := &node[K, V]{owner: owner, bitmap: n.bitmap, items: make([]item[K, V], len(n.items), len(n.items)+extra)}
	copy(c.items, n.items)
	return c
}

// set puts entry e into the subtree n at shift. It reports whether the
// key is new.
func set[K comparable, V any](n *node[K, V], e item[K, V], shift uint, owner *byte) (*node[K, V], bool) {
	if n == nil {
		return &node[K, V]{owner: owner, bitmap: slotBit(e.hash, shift), items: []item[K, V]{e}}, true
	}
	if shift >= hashBits {
		for i := range n.items {
			if n.items[i].key == e.key {
				c := editable(n, owner, 0)
				c.items[i] = e
				return c, false
			}
		}
		c := editable(n, owner, 1)
		c.items = append(c.items, e)
		return c, true
	}
	bit := slotBit(e.hash, shift)
	idx := bits.OnesCount32(n.bitmap & (bit - 1))
	if n.bitmap&bit == 0 {
		c := editable(n, owner, 1)
		c.items = append(c.items, item[K, V]{})
		copy(c.items[idx+1:], c.items[idx:])
		c.items[idx] = e
		c.bitmap |= bit
		return c, true
	}
	it := n.items[idx]
	switch {
	case it.sub != nil:
		sub, added := set(it.sub, e, shift+bitsPerLevel, owner)
		if sub == it.sub {
			return n, added
		}
		c := editable(n, owner, 0)
		c.items[idx].sub = sub
		return c, added
	case it.hash == e.hash && it.key == e.key:
		c := editable(n, owner, 0)
		c.items[idx] = e
		return c, false
	default:
		c := editable(n, owner, 0)
		c.items[idx] = item[K, V]{sub: pair(it, e, shift+bitsPerLevel, owner)}
		return c, true
	}
}

// pair builds the subtree at shift holding two entries of distinct keys.
func pair[K comparable, V any](a, b item[K, V], shift uint, owner *byte) *node[K, V] {
	if shift >= hashBits {
		return &node[K, V]{owner: owner, items: []item[K, V]{a, b}}
	}
	ba, bb := slotBit(a.hash, shift), slotBit(b.hash, shift)
	switch {
	case ba == bb:
		return &node[K, V]{owner: owner, bitmap: ba, items: []item[K, V]{{sub: pair(a, b, shift+bitsPerLevel, owner)}}}
	case ba < bb:
		return &node[K, V]{owner: owner, bitmap: ba | bb, items: []item[K, V]{a, b}}
	default:
		return &node[K, V]{owner: owner, bitmap: ba | bb, items: []item[K, V]{b, a}}
	}
}

func slotBit(h uint64, shift uint) uint32 {
	return uint32(1) << ((h >> shift) & (fanout - 1))
}

// del removes k from the subtree n at shift. The subtree returned is nil
// when it is empty; a subtree left with a single entry is replaced by that
// entry in its parent, so the trie stays as shallow as its keys need.
func del[K comparable, V any](n *node[K, V], h uint64, k K, shift uint, owner *byte) (*node[K, V], bool) {
	if shift >= hashBits {
		for i := range n.items {
			if n.items[i].key == k {
				if len(n.items) == 1 {
					return nil, true
				}
				c := editable(n, owner, 0)
				c.items = append(c.items[:i:i], c.items[i+1:]...)
				return c, true
			}
		}
		return n, false
	}
	bit := slotBit(h, shift)
	if n.bitmap&bit == 0 {
		return n, false
	}
	idx := bits.OnesCount32(n.bitmap & (bit - 1))
	it := n.items[idx]
	if it.sub == nil {
		if it.hash != h || it.key != k {
			return n, false
		}
		if len(n.items) == 1 {
			return nil, true
		}
		c := editable(n, owner, 0)
		c.items = append(c.items[:idx:idx], c.items[idx+1:]...)
		c.bitmap &^= bit
		return c, true
	}
	sub, removed := del(it.sub, h, k, shift+bitsPerLevel, owner)
	if !removed {
		return n, false
	}
	c := editable(n, owner, 0)
	switch {
	case sub == nil: // cannot happen: a subtree holds two entries or more
		c.items = append(c.items[:idx:idx], c.items[idx+1:]...)
		c.bitmap &^= bit
	case len(sub.items) == 1 && sub.items[0].sub == nil:
		c.items[idx] = sub.items[0]
	default:
		c.items[idx].sub = sub
	}
	if len(c.items) == 0 {
		return nil, true
	}
	return c, true
}
