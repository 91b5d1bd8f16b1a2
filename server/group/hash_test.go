package group

import "testing"

// A group's partition is Java's String.hashCode, made non-negative by
// Kafka's Utils.abs, modulo the partition count: clients compute it too.
func TestPartitionForIsJavasHash(t *testing.T) {
	for _, c := range []struct {
		id   string
		hash int32
		of50 int32
	}{
		{"hello", 99162322, 22},
		{"my-group", -1906497762, 12},
		{"console-consumer-61442", 163044278, 28},
		// Its hash is math.MinInt32, whose Utils.abs is 0.
		{"polygenelubricants", -2147483648, 0},
		{"é", 233, 33},
		// A surrogate pair hashes as two UTF-16 code units.
		{"😀", 1772899, 49},
		{"", 0, 0},
	} {
		if h := javaStringHash(c.id); h != c.hash {
			t.Errorf("hash(%q) = %d, want %d", c.id, h, c.hash)
		}
		if p := PartitionFor(c.id, 50); p != c.of50 {
			t.Errorf("PartitionFor(%q, 50) = %d, want %d", c.id, p, c.of50)
		}
	}
}
