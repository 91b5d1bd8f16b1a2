package fetcher

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/internal/kafkahash"
)

// The assignment matches values Java computed with Kafka's formula,
// including non-ASCII topics (UTF-16 code units, a surrogate pair) and a
// topic whose hash is Integer.MIN_VALUE (Utils.abs maps it to 0).
func TestFetcherIDMatchesKafka(t *testing.T) {
	f, err := os.Open("testdata/fetcher_ids.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	rows := 0
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		fields := strings.Split(line, "|")
		if len(fields) != 5 {
			t.Fatalf("bad row %q", line)
		}
		p, _ := strconv.Atoi(fields[1])
		n, _ := strconv.Atoi(fields[2])
		want, _ := strconv.Atoi(fields[3])
		hash, _ := strconv.ParseInt(fields[4], 10, 32)
		if got := kafkahash.String(fields[0]); got != int32(hash) {
			t.Errorf("hash of %q = %d, Java says %d", fields[0], got, hash)
		}
		tp := TopicPartition{fields[0], int32(p)}
		if got := FetcherID(tp, n); got != want {
			t.Errorf("FetcherID(%v, %d) = %d, Java says %d", tp, n, got, want)
		}
		rows++
	}
	if rows < 100 {
		t.Fatalf("only %d rows", rows)
	}
}

func TestThreadName(t *testing.T) {
	if got := ThreadName(3, 102); got != "ReplicaFetcherThread-3-102" {
		t.Fatalf("ThreadName = %q", got)
	}
}
