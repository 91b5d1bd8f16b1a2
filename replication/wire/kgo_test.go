package wire

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFranzGoClient talks to a server with franz-go's kgo, a client nobody
// here wrote: its connection setup negotiates with ApiVersions, and it then
// picks DescribeQuorum's version from what we advertised.
func TestFranzGoClient(t *testing.T) {
	s, _ := startServer(t, serverOpts{})
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addr()), kgo.RetryTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	resp, err := cl.Request(ctx, kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatal(err)
	}
	av := resp.(*kmsg.ApiVersionsResponse)
	if av.ErrorCode != 0 {
		t.Fatalf("ApiVersions error %d", av.ErrorCode)
	}
	var got []APIRange
	for _, k := range av.ApiKeys {
		got = append(got, APIRange{Key: k.ApiKey, MinVersion: k.MinVersion, MaxVersion: k.MaxVersion})
	}
	want := append(slices.Clone(quorumAPIs), APIRange{Key: 18, MaxVersion: 5})
	slices.SortFunc(want, func(a, b APIRange) int { return int(a.Key - b.Key) })
	if !slices.Equal(got, want) {
		t.Fatalf("kgo saw ApiVersions %v, want %v", got, want)
	}

	seeds := cl.SeedBrokers()
	if len(seeds) != 1 {
		t.Fatalf("%d seed brokers", len(seeds))
	}
	dq, err := seeds[0].Request(ctx, kmsg.NewPtrDescribeQuorumRequest())
	if err != nil {
		t.Fatal(err)
	}
	q := dq.(*kmsg.DescribeQuorumResponse)
	if q.Version != 1 {
		t.Errorf("kgo used DescribeQuorum v%d, want v1, the highest we serve", q.Version)
	}
	if q.ErrorCode != 0 || q.Topics[0].Partitions[0].HighWatermark != 42 {
		t.Fatalf("DescribeQuorum via kgo: %+v", q)
	}
}
