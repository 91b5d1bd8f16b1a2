package cache

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// summary prints an answer's topics and partitions in one line each, so a
// table can state them exactly.
func summary(resp *kmsg.MetadataResponse) []string {
	var out []string
	for _, t := range resp.Topics {
		name := "<nil>"
		if t.Topic != nil {
			name = *t.Topic
		}
		line := fmt.Sprintf("%s id=%v err=%s", name, record.Uuid(t.TopicID) != record.ZeroUuid, errName(t.ErrorCode))
		for _, p := range t.Partitions {
			line += fmt.Sprintf(" | %d err=%s leader=%d epoch=%d replicas=%v isr=%v offline=%v",
				p.Partition, errName(p.ErrorCode), p.Leader, p.LeaderEpoch, p.Replicas, p.ISR, p.OfflineReplicas)
		}
		out = append(out, line)
	}
	return out
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(code).(*kerr.Error).Message
}

func brokerIDs(resp *kmsg.MetadataResponse) []int32 {
	var ids []int32
	for _, b := range resp.Brokers {
		ids = append(ids, b.NodeID)
	}
	return ids
}

func metadataRequest(version int16, topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = version
	req.Topics = []kmsg.MetadataRequestTopic{}
	for _, name := range topics {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = str(name)
		req.Topics = append(req.Topics, t)
	}
	return req
}

func allTopics(version int16) *kmsg.MetadataRequest {
	req := metadataRequest(version)
	req.Topics = nil
	return req
}

func byID(version int16, ids ...record.Uuid) *kmsg.MetadataRequest {
	req := metadataRequest(version)
	for _, id := range ids {
		t := kmsg.NewMetadataRequestTopic()
		t.TopicID = id
		req.Topics = append(req.Topics, t)
	}
	return req
}

const (
	ordersAll = "orders id=true err=NONE" +
		" | 0 err=NONE leader=101 epoch=3 replicas=[101 102 103] isr=[101 102 103] offline=[103]" +
		" | 1 err=NONE leader=103 epoch=3 replicas=[103 101] isr=[103 101] offline=[103]"
	clicksV6 = "clicks id=true err=NONE" +
		" | 0 err=LEADER_NOT_AVAILABLE leader=-1 epoch=3 replicas=[109 101] isr=[101] offline=[109]" +
		" | 1 err=LISTENER_NOT_FOUND leader=-1 epoch=3 replicas=[104 101] isr=[104 101] offline=[104]"
)

func TestMetadataAnswersFromTheImage(t *testing.T) {
	img := testImage(t)
	for _, tc := range []struct {
		name string
		req  *kmsg.MetadataRequest
		want []string
	}{
		{"null topics ask for all", allTopics(12), []string{clicksV6, ordersAll}},
		{"an empty list asks for none", metadataRequest(12), nil},
		{"an empty list at v0 asks for all, and lists only reachable replicas", metadataRequest(0), []string{
			"clicks id=true err=NONE" +
				" | 0 err=LEADER_NOT_AVAILABLE leader=-1 epoch=3 replicas=[101] isr=[101] offline=[109]" +
				" | 1 err=LEADER_NOT_AVAILABLE leader=-1 epoch=3 replicas=[101] isr=[101] offline=[104]",
			"orders id=true err=NONE" +
				" | 0 err=REPLICA_NOT_AVAILABLE leader=101 epoch=3 replicas=[101 102] isr=[101 102] offline=[103]" +
				" | 1 err=REPLICA_NOT_AVAILABLE leader=103 epoch=3 replicas=[101] isr=[101] offline=[103]",
		}},
		{"before v6 a leader without the listener is not available", metadataRequest(5, "clicks"), []string{
			"clicks id=true err=NONE" +
				" | 0 err=LEADER_NOT_AVAILABLE leader=-1 epoch=3 replicas=[109 101] isr=[101] offline=[109]" +
				" | 1 err=LEADER_NOT_AVAILABLE leader=-1 epoch=3 replicas=[104 101] isr=[104 101] offline=[104]",
		}},
		{"named topics, missing and invalid names", metadataRequest(12, "orders", "nope", "bad name!", "orders"), []string{
			ordersAll,
			"nope id=false err=UNKNOWN_TOPIC_OR_PARTITION",
			"bad name! id=false err=INVALID_TOPIC_EXCEPTION",
		}},
		{"topics by id, one unknown", byID(12, clicksID, topicID(99)), []string{
			"<nil> id=true err=UNKNOWN_TOPIC_ID",
			clicksV6,
		}},
		{"ids before v12 are refused", byID(11, clicksID), []string{
			" id=true err=INVALID_REQUEST",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := Metadata(img, testCluster, 101, "PLAINTEXT", tc.req)
			got := summary(resp)
			if !slices.Equal(got, tc.want) {
				t.Errorf("topics:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tc.want, "\n     "))
			}
			if resp.ErrorCode != 0 {
				return
			}
			if ids := brokerIDs(resp); !slices.Equal(ids, []int32{101, 102}) {
				t.Errorf("brokers %v, want the alive ones with PLAINTEXT, [101 102]", ids)
			}
			if resp.ClusterID == nil || *resp.ClusterID != testCluster {
				t.Errorf("cluster id %v", resp.ClusterID)
			}
		})
	}
}

// The brokers carry their PLAINTEXT address and rack; the controller id is
// an alive broker's, as a KRaft broker reports it.
func TestMetadataBrokersAndControllerID(t *testing.T) {
	img := testImage(t)
	resp := Metadata(img, testCluster, 101, "PLAINTEXT", allTopics(13))
	if len(resp.Brokers) != 2 {
		t.Fatalf("brokers %+v", resp.Brokers)
	}
	b := resp.Brokers[1]
	if b.NodeID != 102 || b.Host != "127.0.0.1" || b.Port != 9102 || b.Rack == nil || *b.Rack != "rack-b" {
		t.Errorf("broker 102: %+v", b)
	}
	seen := map[int32]bool{}
	for range 200 {
		seen[Metadata(img, testCluster, 101, "PLAINTEXT", allTopics(13)).ControllerID] = true
	}
	for id := range seen {
		if id != 101 && id != 102 && id != 104 {
			t.Errorf("controller id %d is not an alive broker", id)
		}
	}
	if len(seen) < 2 {
		t.Errorf("controller ids seen %v: not spread over the alive brokers", seen)
	}
	if got := Metadata(image.Empty, testCluster, 101, "PLAINTEXT", allTopics(13)); got.ControllerID != -1 || len(got.Brokers) != 0 || len(got.Topics) != 0 {
		t.Errorf("empty image: %+v", got)
	}
}

func TestMetadataAuthorizedOperations(t *testing.T) {
	img := testImage(t)
	plain := Metadata(img, testCluster, 101, "PLAINTEXT", metadataRequest(10, "orders"))
	if plain.AuthorizedOperations != notAsked || plain.Topics[0].AuthorizedOperations != notAsked {
		t.Errorf("not asked: cluster %d topic %d, want %d", plain.AuthorizedOperations, plain.Topics[0].AuthorizedOperations, notAsked)
	}
	req := metadataRequest(10, "orders")
	req.IncludeClusterAuthorizedOperations, req.IncludeTopicAuthorizedOperations = true, true
	asked := Metadata(img, testCluster, 101, "PLAINTEXT", req)
	if asked.AuthorizedOperations != clusterOperations || asked.Topics[0].AuthorizedOperations != topicOperations {
		t.Errorf("asked: cluster %d topic %d", asked.AuthorizedOperations, asked.Topics[0].AuthorizedOperations)
	}
	req.Version = 11 // the cluster's moved to DescribeCluster (KIP-700)
	if got := Metadata(img, testCluster, 101, "PLAINTEXT", req); got.AuthorizedOperations != notAsked {
		t.Errorf("v11 cluster operations %d", got.AuthorizedOperations)
	}
}

// A replica in a directory its broker does not report online is offline,
// as is one in a lost directory; an unassigned one is not.
func TestMetadataOfflineDirectories(t *testing.T) {
	img := testImage(t)
	p := partition(ordersID, 2, 101, 102)
	p.Directories = []record.Uuid{record.DirectoryLost, record.DirectoryUnassigned}
	q := partition(ordersID, 3, 102, 101)
	q.Directories = []record.Uuid{record.NewUuid(5, 5), logDir(101)}
	img = replay(t, img, p, q)
	got := summary(Metadata(img, testCluster, 101, "PLAINTEXT", metadataRequest(12, "orders")))
	for _, want := range []string{
		"| 2 err=NONE leader=101 epoch=3 replicas=[101 102] isr=[101 102] offline=[101]",
		"| 3 err=NONE leader=102 epoch=3 replicas=[102 101] isr=[102 101] offline=[102]",
	} {
		if !strings.Contains(got[0], want) {
			t.Errorf("%s\nlacks %s", got[0], want)
		}
	}
}
