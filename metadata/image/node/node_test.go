package node

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s--- want\n%s", name, got, want)
	}
}

func find(t *testing.T, img *image.MetadataImage, path string) Node {
	t.Helper()
	n, err := Find(Root(img), path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}

// TestFilesPrintAsKafka: each file's text is what Kafka's node prints for
// the same image (the toString forms of BrokerRegistration and
// PartitionRegistration, the provenance's ISO time, the Optional
// metadata version).
func TestFilesPrintAsKafka(t *testing.T) {
	img := small(t)
	for _, tc := range []struct{ path, want string }{
		{"/image/provenance", "offset 41, epoch 3, time 2026-01-01T00:00:00.123Z[UTC]"},
		{"/image/features/metadataVersion", "Optional[4.4-IV2]"},
		{"/image/features/finalized_group.version", "1"},
		{"/image/features/finalized_nothing", "0"},
		{"/image/cluster/brokers/101", "BrokerRegistration(id=101, epoch=5, incarnationId=AAAAAAAAAAcAAAAAAAAACA, " +
			"listeners=[Endpoint(listenerName='PLAINTEXT', securityProtocol=PLAINTEXT, host='127.0.0.1', port=9192), " +
			"Endpoint(listenerName='SSL', securityProtocol=SSL, host='localhost', port=9193)], " +
			"supportedFeatures={group.version: 0-1, kraft.version: 0, metadata.version: 7-33}, rack=Optional[r1], fenced=true, " +
			"inControlledShutdown=false, isMigratingZkBroker=false, directories=[qqqqqqqqqqoREREREREREQ, G7u7u7u7u7siIiIiIiIiIg], cordonedDirectories=null)"},
		{"/image/cluster/brokers/0102", "BrokerRegistration(id=102, epoch=6, incarnationId=AAAAAAAAAAkAAAAAAAAACQ, " +
			"listeners=[Endpoint(listenerName='PLAINTEXT', securityProtocol=PLAINTEXT, host='127.0.0.1', port=9292)], " +
			"supportedFeatures={transaction.version: 0+}, rack=Optional.empty, fenced=false, " +
			"inControlledShutdown=false, isMigratingZkBroker=false, directories=[], cordonedDirectories=[G7u7u7u7u7siIiIiIiIiIg])"},
		{"/image/cluster/controllers/3000", "ControllerRegistration(id=3000, incarnationId=AAAAAAAAAAsAAAAAAAAADA, zkMigrationReady=false, " +
			"listeners=[Endpoint(listenerName='CONTROLLER', securityProtocol=SASL_PLAINTEXT, host='localhost', port=9093), " +
			"Endpoint(listenerName='CONTROLLER_SSL', securityProtocol=SSL, host='localhost', port=9094)], " +
			"supportedFeatures={kraft.version: 0-1, metadata.version: 7-33})"},
		{"/image/topics/byName/t/0", "PartitionRegistration(replicas=[101, 102], directories=[qqqqqqqqqqoREREREREREQ, G7u7u7u7u7siIiIiIiIiIg], " +
			"isr=[101, 102], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=101, leaderRecoveryState=RECOVERED, leaderEpoch=2, partitionEpoch=5)"},
		{"/image/topics/byName/t/1", "PartitionRegistration(replicas=[102, 101], directories=[G7u7u7u7u7siIiIiIiIiIg, qqqqqqqqqqoREREREREREQ], " +
			"isr=[102], removingReplicas=[], addingReplicas=[], elr=[101], lastKnownElr=[], leader=102, leaderRecoveryState=RECOVERING, leaderEpoch=0, partitionEpoch=0)"},
		{"/image/topics/byName/t/id", "AQIDBAUGBwgJCgsMDQ4PEA"},
		{"/image/scram/SCRAM-SHA-256/kraftlab-member", "ScramCredentialData(salt=[redacted], storedKey=[redacted], serverKey=[redacted], iterations=[redacted])"},
		{"/image/topics/byId/AQIDBAUGBwgJCgsMDQ4PEA/name", "t"},
		{"image/topics/./byName/../byName/t/name", "t"},
		{"/image/configs/TOPIC:t/retention.ms", "604800000"},
		{"/image/configs/BROKER/log.retention.ms", "1000"},
		{"/image/configs/BROKER:101/num.io.threads", "4"},
		{"/image/configs/BROKER_LOGGER:101/kafka.raft", "DEBUG"},
	} {
		n := find(t, img, tc.path)
		if n.IsDirectory() {
			t.Errorf("%s is a directory", tc.path)
			continue
		}
		if got := Cat(n); got != tc.want+"\n" {
			t.Errorf("%s:\n got %q\nwant %q", tc.path, got, tc.want+"\n")
		}
		if got := Stringify(n); !strings.Contains(tc.path, "configs") && got != tc.want {
			t.Errorf("%s stringified: %q", tc.path, got)
		}
	}
}

// TestListAsKafka: directories list Kafka's child names, sorted as ls
// sorts them (as strings: "101" before "99").
func TestListAsKafka(t *testing.T) {
	img := small(t)
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/", []string{"image"}},
		{"/image", []string{"cluster", "configs", "features", "producerIds", "provenance", "scram", "topics"}},
		{"/image/scram", []string{"SCRAM-SHA-256", "SCRAM-SHA-512"}},
		{"/image/scram/SCRAM-SHA-256", []string{"kraftlab-member"}},
		{"/image/scram/SCRAM-SHA-512", nil},
		{"/image/features", []string{"finalized_group.version", "metadataVersion"}},
		{"/image/cluster", []string{"brokers", "controllers"}},
		{"/image/cluster/brokers", []string{"101", "102"}},
		{"/image/cluster/controllers", []string{"3000"}},
		{"/image/topics", []string{"byId", "byName"}},
		{"/image/topics/byName", []string{"empty", "t"}},
		{"/image/topics/byId", []string{"AQIDBAUGBwgJCgsMDQ4PEA", "f_________8AAAAAAAAAAg"}},
		{"/image/topics/byName/t", []string{"0", "1", "id", "name"}},
		{"/image/topics/byName/empty", []string{"id", "name"}},
		{"/image/configs", []string{"BROKER", "BROKER:101", "BROKER_LOGGER:101", "TOPIC:t"}},
		{"/image/configs/TOPIC:t", []string{"cleanup.policy", "retention.ms"}},
		{"/image/provenance", nil},
	} {
		if got := List(find(t, img, tc.path)); !slices.Equal(got, tc.want) {
			t.Errorf("ls %s: %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestFindNamesTheMissingPart: errors name the path up to the part that
// is not there.
func TestFindNamesTheMissingPart(t *testing.T) {
	img := small(t)
	for _, tc := range []struct {
		path string
		is   error
		msg  string
	}{
		{"/image/topics/byName/x", ErrNoSuchNode, "no such node: /image/topics/byName/x"},
		{"/image/topics/byName/x/0", ErrNoSuchNode, "no such node: /image/topics/byName/x"},
		{"/image/clientQuotas", ErrNoSuchNode, "no such node: /image/clientQuotas"},
		{"/image/cluster/brokers/103", ErrNoSuchNode, "no such node: /image/cluster/brokers/103"},
		{"/image/cluster/brokers/x1", ErrNoSuchNode, "no such node: /image/cluster/brokers/x1"},
		{"/image/cluster/controllers/3001", ErrNoSuchNode, "no such node: /image/cluster/controllers/3001"},
		{"/image/topics/byName/t/2", ErrNoSuchNode, "no such node: /image/topics/byName/t/2"},
		{"/image/topics/byId/AAAA", ErrNoSuchNode, "no such node: /image/topics/byId/AAAA"},
		{"/image/configs/TOPICS:t", ErrNoSuchNode, "no such node: /image/configs/TOPICS:t"},
		{"/image/configs/TOPIC:u", ErrNoSuchNode, "no such node: /image/configs/TOPIC:u"},
		{"/image/provenance/x", ErrNotDirectory, "not a directory: /image/provenance"},
		{"/local", ErrNoSuchNode, "no such node: /local"},
	} {
		_, err := Find(Root(img), tc.path)
		if !errors.Is(err, tc.is) || err.Error() != tc.msg {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.msg)
		}
	}
	if n, err := Find(Root(img), "/../.."); err != nil || !slices.Equal(List(n), []string{"image"}) {
		t.Errorf("/../..: %v %v", n, err)
	}
}

// TestEmptyImage: what Kafka prints before the first record.
func TestEmptyImage(t *testing.T) {
	for path, want := range map[string]string{
		"/image/provenance":               "offset -1, epoch -1, time 1969-12-31T23:59:59.999Z[UTC]\n",
		"/image/features/metadataVersion": "Optional.empty\n",
		"/image/topics":                   "byId:\nbyName:\n",
	} {
		if got := Cat(find(t, image.Empty, path)); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}

// TestStringifyRedactsConfigs as Kafka's default NodeStringifier (strict
// criteria) does; the shell's printer shows the values.
func TestStringifyRedactsConfigs(t *testing.T) {
	n := find(t, small(t), "/image/configs")
	want := "BROKER(log.retention.ms([redacted])), BROKER:101(num.io.threads([redacted])), " +
		"BROKER_LOGGER:101(kafka.raft([redacted])), TOPIC:t(cleanup.policy([redacted]), retention.ms([redacted]))"
	if got := Stringify(n); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := Cat(find(t, small(t), "/image/configs/TOPIC:t")); got != "cleanup.policy:\n  compact\nretention.ms:\n  604800000\n" {
		t.Errorf("cat: %q", got)
	}
}

// TestTreeGolden: the whole image as the shell's tree prints it.
func TestTreeGolden(t *testing.T) {
	golden(t, "tree.golden", Cat(Root(small(t))))
}

func TestISOZonedUTC(t *testing.T) {
	for ms, want := range map[int64]string{
		0:               "1970-01-01T00:00:00Z[UTC]",
		1767225600000:   "2026-01-01T00:00:00Z[UTC]",
		1767225600500:   "2026-01-01T00:00:00.5Z[UTC]",
		1767225600010:   "2026-01-01T00:00:00.01Z[UTC]",
		-1:              "1969-12-31T23:59:59.999Z[UTC]",
		253402300800000: "+10000-01-01T00:00:00Z[UTC]",
		1767225659999:   "2026-01-01T00:00:59.999Z[UTC]",
	} {
		if got := isoZonedUTC(ms); got != want {
			t.Errorf("%d: %s, want %s", ms, got, want)
		}
	}
}

func TestMetadataVersionName(t *testing.T) {
	for level, want := range map[int16]string{7: "3.3-IV3", 17: "3.7-IV2", 21: "3.9-IV0", 23: "4.0-IV1", 30: "4.3-IV0", 33: "4.4-IV2"} {
		if got, ok := MetadataVersionName(level); !ok || got != want {
			t.Errorf("%d: %q, want %q", level, got, want)
		}
	}
	for _, level := range []int16{-1, 0, 6, 34} {
		if got, ok := MetadataVersionName(level); ok {
			t.Errorf("%d: %q", level, got)
		}
	}
}

// FuzzFind: no path panics; a path either resolves or fails with one of
// Find's errors, and a resolved node prints.
func FuzzFind(f *testing.F) {
	for _, p := range []string{"/image/topics/byName/t/0", "/image/configs/BROKER_LOGGER:101/kafka.raft", "../..//image/./cluster/brokers/+101",
		"/image/topics/byId/AQIDBAUGBwgJCgsMDQ4PEA/id", "/image/provenance/x", "/image/configs/BROKER_LOGGER", "\x00/\xff"} {
		f.Add(p)
	}
	img := small(f)
	f.Fuzz(func(t *testing.T, path string) {
		n, err := Find(Root(img), path)
		if err != nil {
			if !errors.Is(err, ErrNoSuchNode) && !errors.Is(err, ErrNotDirectory) {
				t.Fatalf("%q: %v", path, err)
			}
			return
		}
		_ = List(n)
		_ = Cat(n)
		_ = Stringify(n)
	})
}

// TestScramListedOnlyWithCredentials: an image without SCRAM credentials
// (every image kraftlab's own controllers write) lists no scram directory.
func TestScramListedOnlyWithCredentials(t *testing.T) {
	img := replay(t, 0, 0)
	if got := List(find(t, img, "/image")); slices.Contains(got, "scram") {
		t.Errorf("ls /image: %q", got)
	}
}
