package pmap

// Builder makes many changes to a map cheaply: it changes in place the
// nodes it has made itself, and copies the others once. Map hands out the
// result; the Builder may go on changing without disturbing it.
type Builder[K comparable, V any] struct {
	m     Map[K, V]
	owner *byte
}

// Builder starts a Builder from m; m itself never changes.
func (m Map[K, V]) Builder() *Builder[K, V] {
	return &Builder[K, V]{m: m, owner: new(byte)}
}

// Get returns the value for k.
func (b *Builder[K, V]) Get(k K) (V, bool) { return b.m.Get(k) }

// Len is the number of entries.
func (b *Builder[K, V]) Len() int { return b.m.size }

// Set sets k to v.
func (b *Builder[K, V]) Set(k K, v V) {
	root, added := set(b.m.root, item[K, V]{hash: b.m.hash(k), key: k, val: v}, 0, b.owner)
	b.m.root = root
	if added {
		b.m.size++
	}
}

// Delete removes k.
func (b *Builder[K, V]) Delete(k K) {
	if b.m.root == nil {
		return
	}
	root, removed := del(b.m.root, b.m.hash(k), k, 0, b.owner)
	if removed {
		b.m.root = root
		b.m.size--
	}
}

// Map returns the map built so far. Later changes through b copy the
// nodes they touch, so the map returned stays as it is.
func (b *Builder[K, V]) Map() Map[K, V] {
	b.owner = new(byte)
	return b.m
}
