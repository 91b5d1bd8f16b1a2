package interop

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// kraftlabControllerAPIs is what a kraftlab controller advertised, kept for
// TestKafkaController to compare with a real Kafka controller's.
var kraftlabControllerAPIs map[int16][2]int16

var reAPILine = regexp.MustCompile(`^\s*(\w+)\((\d+)\): (?:UNSUPPORTED|(\d+) to (\d+) \[usable: (\d+)\])`)

// parseBrokerAPIVersions reads kafka-broker-api-versions' output: for
// each node ("host:port (id: N ...) -> ("), its supported APIs.
func parseBrokerAPIVersions(out string) map[int32]map[int16][2]int16 {
	nodes := map[int32]map[int16][2]int16{}
	var cur map[int16][2]int16
	reNode := regexp.MustCompile(`\(id: (-?\d+) rack`)
	for _, line := range strings.Split(out, "\n") {
		if m := reNode.FindStringSubmatch(line); m != nil && strings.HasSuffix(line, "-> (") {
			id, _ := strconv.Atoi(m[1])
			cur = map[int16][2]int16{}
			nodes[int32(id)] = cur
			continue
		}
		if m := reAPILine.FindStringSubmatch(line); m != nil && cur != nil && m[3] != "" {
			key, _ := strconv.Atoi(m[2])
			lo, _ := strconv.Atoi(m[3])
			hi, _ := strconv.Atoi(m[4])
			cur[int16(key)] = [2]int16{int16(lo), int16(hi)}
		}
	}
	return nodes
}

func formatAPIs(apis map[int16][2]int16) string {
	keys := make([]int16, 0, len(apis))
	for k := range apis {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s(%d) %d-%d", kmsg.NameForKey(k), k, apis[k][0], apis[k][1]))
	}
	return strings.Join(parts, ", ")
}

// TestBrokerAPIVersions runs kafka-broker-api-versions against a kraftlab
// broker (straight) and a controller (through a Front): Kafka must parse
// kraftlab's ApiVersions answer into exactly the ranges kraftlab
// advertises.
func TestBrokerAPIVersions(t *testing.T) {
	k := needKafka(t)
	p := startPlayground(t, "--controllers", "1", "--brokers", "1", "--profile", "fast")
	for _, c := range []struct {
		name string
		id   int32
		addr string
	}{{"broker", 101, p.Brokers[0]}, {"controller", 1, p.Controllers[1]}} {
		t.Run(c.name, func(t *testing.T) {
			// A broker answers the tool's bootstrap Metadata itself; a
			// controller serves no Metadata, so it goes through a Front
			// that names the controller's real listener.
			var f *Front
			boot := c.addr
			if c.name == "controller" {
				f = &Front{Nodes: map[int32]string{c.id: c.addr}, ClusterID: "interop", ControllerID: 1, Direct: true}
				if err := f.Listen(); err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				boot = f.Addr(c.id)
			}
			r := runTool(t, k, MainBrokerAPIVersions, "--bootstrap-server", boot)
			if r.Err != nil {
				t.Fatalf("kafka-broker-api-versions: %v", r.Err)
			}
			printed := parseBrokerAPIVersions(r.Stdout)[c.id]
			if printed == nil {
				t.Fatalf("no node %d in kafka-broker-api-versions' output", c.id)
			}
			own, err := APIVersions(c.addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("Kafka parsed node %d's ApiVersions as: %s", c.id, formatAPIs(printed))
			// Kafka lists only the APIs its client knows; every one it
			// printed must be kraftlab's range, and every key kraftlab
			// advertises that Kafka knows must be printed.
			for key, rng := range own {
				if got, ok := printed[key]; !ok {
					if strings.Contains(r.Stdout, fmt.Sprintf("(%d): UNSUPPORTED", key)) {
						t.Errorf("%s(%d): kraftlab advertises %d-%d, Kafka printed UNSUPPORTED", kmsg.NameForKey(key), key, rng[0], rng[1])
					} else {
						t.Logf("%s(%d) %d-%d: not in Kafka's list (an API its admin client does not know)", kmsg.NameForKey(key), key, rng[0], rng[1])
					}
				} else if got != rng {
					t.Errorf("%s(%d): kraftlab advertises %d-%d, Kafka printed %d-%d", kmsg.NameForKey(key), key, rng[0], rng[1], got[0], got[1])
				}
			}
			for key := range printed {
				if _, ok := own[key]; !ok {
					t.Errorf("Kafka printed %s(%d) as supported, kraftlab does not advertise it", kmsg.NameForKey(key), key)
				}
			}
			if strings.Contains(r.Stdout, "[usable: ") {
				for _, line := range strings.Split(r.Stdout, "\n") {
					if m := reAPILine.FindStringSubmatch(line); m != nil && m[3] != "" && m[4] != m[5] {
						t.Logf("Kafka's client would use an older version than kraftlab's newest: %s", strings.TrimSpace(line))
					}
				}
			}
			if c.name == "controller" {
				kraftlabControllerAPIs = own
			}
			if f != nil {
				t.Logf("requests through the Front: %v", f.Seen())
			}
		})
	}
}
