package kafkahash

import "testing"

// A group's partition is Java's String.hashCode, made non-negative by
// Kafka's Utils.abs, modulo the partition count: clients compute it too.
func TestGroupPartitionIsJavasHash(t *testing.T) {
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
		if h := String(c.id); h != c.hash {
			t.Errorf("String(%q) = %d, want %d", c.id, h, c.hash)
		}
		if p := GroupPartition(c.id, 50); p != c.of50 {
			t.Errorf("GroupPartition(%q, 50) = %d, want %d", c.id, p, c.of50)
		}
	}
	if p := GroupPartition("hello", 0); p != 0 {
		t.Errorf("GroupPartition of no partitions = %d", p)
	}
}

func TestAbs(t *testing.T) {
	for in, want := range map[int32]int32{0: 0, 5: 5, -5: 5, -2147483648: 0, 2147483647: 2147483647, -2147483647: 2147483647} {
		if got := Abs(in); got != want {
			t.Errorf("Abs(%d) = %d, want %d", in, got, want)
		}
	}
}
