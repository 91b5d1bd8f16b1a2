package pmap

import (
	"math/rand/v2"
	"testing"
)

func check(t *testing.T, m Map[int, int], want map[int]int) {
	t.Helper()
	if m.Len() != len(want) {
		t.Fatalf("len %d, want %d", m.Len(), len(want))
	}
	n := 0
	for k, v := range m.All() {
		n++
		if want[k] != v {
			t.Fatalf("entry %d=%d, want %d", k, v, want[k])
		}
	}
	if n != len(want) {
		t.Fatalf("iterated %d entries, want %d", n, len(want))
	}
	for k, v := range want {
		if got, ok := m.Get(k); !ok || got != v {
			t.Fatalf("Get(%d) = %d %v, want %d", k, got, ok, v)
		}
	}
}

func clone(m map[int]int) map[int]int {
	c := make(map[int]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Random sets and deletes against a Go map, keeping every version to
// check that none changes; with a good hash, with one that collides in
// its low bits, and with one that collides in all 64 bits.
func TestAgainstMap(t *testing.T) {
	hashes := map[string]func(int) uint64{
		"mixed":        func(k int) uint64 { return Mix64(uint64(k)) },
		"identity":     func(k int) uint64 { return uint64(k) },
		"high bits":    func(k int) uint64 { return uint64(k%7) << 58 },
		"full collide": func(k int) uint64 { return uint64(k % 3) },
	}
	for name, h := range hashes {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			m := New[int, int](h)
			want := map[int]int{}
			type version struct {
				m    Map[int, int]
				want map[int]int
			}
			var versions []version
			b := m.Builder()
			for i := 0; i < 4000; i++ {
				k := rng.IntN(300)
				useBuilder := i%1000 >= 500
				if rng.IntN(3) == 0 {
					delete(want, k)
					if useBuilder {
						b.Delete(k)
					} else {
						m = m.Delete(k)
					}
				} else {
					want[k] = i
					if useBuilder {
						b.Set(k, i)
					} else {
						m = m.Set(k, i)
					}
				}
				switch {
				case i%1000 == 499: // switch to the builder
					b = m.Builder()
				case i%1000 == 999: // and back
					m = b.Map()
				}
				if i%50 == 0 {
					cur := m
					if useBuilder {
						cur = b.Map()
					}
					check(t, cur, want)
					versions = append(versions, version{cur, clone(want)})
				}
			}
			for _, v := range versions {
				check(t, v.m, v.want)
			}
			for k := range want {
				m = m.Delete(k)
			}
			if m.Len() != 0 || m.root != nil {
				t.Fatalf("emptied map: len %d root %v", m.Len(), m.root)
			}
		})
	}
}

func TestSetShares(t *testing.T) {
	m := New[int32, int](HashInt32)
	b := m.Builder()
	for i := int32(0); i < 100_000; i++ {
		b.Set(i, int(i))
	}
	m = b.Map()
	m2 := m.Set(77, -1)
	if v, _ := m.Get(77); v != 77 {
		t.Fatal("Set changed the old map")
	}
	if v, _ := m2.Get(77); v != -1 {
		t.Fatal("Set did not set")
	}
	shared := 0
	for i := range m.root.items {
		if m.root.items[i].sub == m2.root.items[i].sub {
			shared++
		}
	}
	if shared != fanout-1 {
		t.Fatalf("%d of %d subtrees of the root shared, want all but one", shared, fanout)
	}
}

func BenchmarkSet(b *testing.B) {
	m := New[int32, int](HashInt32)
	bl := m.Builder()
	for i := int32(0); i < 1_000_000; i++ {
		bl.Set(i, int(i))
	}
	m = bl.Map()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m = m.Set(int32(i%1_000_000), i)
	}
}
