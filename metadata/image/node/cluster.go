package node

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

const (
	brokersName     = "brokers"
	controllersName = "controllers"
)

// clusterNode is /image/cluster (Kafka's ClusterImageNode).
type clusterNode struct {
	dir
	c *image.ClusterImage
}

func (clusterNode) ChildNames() []string { return []string{brokersName, controllersName} }

func (n clusterNode) Child(name string) Node {
	switch name {
	case brokersName:
		return brokersNode{c: n.c}
	case controllersName:
		// Only a Kafka controller registers itself (KIP-919); on a log
		// kraftlab's controllers wrote, the directory is empty.
		return controllersNode{c: n.c}
	}
	return nil
}

func (n clusterNode) Print(p Printer) { printChildren(n, p) }

// brokersNode is /image/cluster/brokers (ClusterImageBrokersNode): a file
// per broker id.
type brokersNode struct {
	dir
	c *image.ClusterImage
}

func (n brokersNode) ChildNames() []string {
	var names []string
	for _, id := range n.c.BrokerIDs() {
		names = append(names, strconv.Itoa(int(id)))
	}
	return names
}

func (n brokersNode) Child(name string) Node {
	id, ok := parseInt32(name)
	if !ok {
		return nil
	}
	b := n.c.Broker(id)
	if b == nil {
		return nil
	}
	return leaf(brokerString(b))
}

func (n brokersNode) Print(p Printer) { printChildren(n, p) }

// controllersNode is /image/cluster/controllers
// (ClusterImageControllersNode): a file per controller id.
type controllersNode struct {
	dir
	c *image.ClusterImage
}

func (n controllersNode) ChildNames() []string {
	var names []string
	for _, id := range n.c.ControllerIDs() {
		names = append(names, strconv.Itoa(int(id)))
	}
	return names
}

func (n controllersNode) Child(name string) Node {
	id, ok := parseInt32(name)
	if !ok {
		return nil
	}
	c := n.c.Controller(id)
	if c == nil {
		return nil
	}
	return leaf(controllerString(c))
}

func (n controllersNode) Print(p Printer) { printChildren(n, p) }

// controllerString is Kafka's ControllerRegistration.toString: listeners
// and features sorted by name (the image keeps them so).
func controllerString(c *image.ControllerRegistration) string {
	var s strings.Builder
	fmt.Fprintf(&s, "ControllerRegistration(id=%d, incarnationId=%s, zkMigrationReady=%t, listeners=[", c.ID, c.IncarnationID, c.ZkMigrationReady)
	for i, l := range c.Listeners {
		if i > 0 {
			s.WriteString(", ")
		}
		writeEndpoint(&s, l.Name, l.SecurityProtocol, l.Host, l.Port)
	}
	s.WriteString("], supportedFeatures={")
	for i, f := range c.SupportedFeatures {
		if i > 0 {
			s.WriteString(", ")
		}
		fmt.Fprintf(&s, "%s: %s", f.Name, versionRange(f.MinSupportedVersion, f.MaxSupportedVersion))
	}
	s.WriteString("})")
	return s.String()
}

// writeEndpoint is Kafka's Endpoint.toString.
func writeEndpoint(s *strings.Builder, name string, protocol int16, host string, port uint16) {
	proto, ok := securityProtocols[protocol]
	if !ok {
		proto = "null" // SecurityProtocol.forId of an unknown id
	}
	fmt.Fprintf(s, "Endpoint(listenerName='%s', securityProtocol=%s, host='%s', port=%d)", name, proto, host, port)
}

// parseInt32 reads a child name as Java's Integer.parseInt does (an
// optional sign, decimal digits).
func parseInt32(s string) (int32, bool) {
	v, err := strconv.ParseInt(s, 10, 32)
	return int32(v), err == nil
}

// securityProtocols are SecurityProtocol's names by id.
var securityProtocols = map[int16]string{
	record.SecurityProtocolPlaintext: "PLAINTEXT",
	record.SecurityProtocolSSL:       "SSL",
	record.SecurityProtocolSASLPlain: "SASL_PLAINTEXT",
	record.SecurityProtocolSASLSSL:   "SASL_SSL",
}

// brokerString is Kafka's BrokerRegistration.toString: listeners and
// features sorted by name, the rack as a Java Optional, directories sorted
// as Kafka's constructor sorts them.
func brokerString(b *image.BrokerRegistration) string {
	var s strings.Builder
	fmt.Fprintf(&s, "BrokerRegistration(id=%d, epoch=%d, incarnationId=%s, listeners=[", b.ID, b.Epoch, b.IncarnationID)
	ls := slices.SortedStableFunc(slices.Values(b.Listeners), func(x, y record.BrokerEndpoint) int { return cmp.Compare(x.Name, y.Name) })
	for i, l := range ls {
		if i > 0 {
			s.WriteString(", ")
		}
		writeEndpoint(&s, l.Name, l.SecurityProtocol, l.Host, l.Port)
	}
	s.WriteString("], supportedFeatures={")
	fs := slices.SortedStableFunc(slices.Values(b.SupportedFeatures), func(x, y record.BrokerFeature) int { return cmp.Compare(x.Name, y.Name) })
	for i, f := range fs {
		if i > 0 {
			s.WriteString(", ")
		}
		fmt.Fprintf(&s, "%s: %s", f.Name, versionRange(f.MinSupportedVersion, f.MaxSupportedVersion))
	}
	rack := "Optional.empty"
	if b.Rack != nil {
		rack = "Optional[" + *b.Rack + "]"
	}
	cordoned := "null"
	if b.CordonedDirectories != nil {
		cordoned = uuidList(b.CordonedDirectories)
	}
	fmt.Fprintf(&s, "}, rack=%s, fenced=%t, inControlledShutdown=%t, isMigratingZkBroker=%t, directories=%s, cordonedDirectories=%s)",
		rack, b.Fenced, b.InControlledShutdown, b.IsMigratingZkBroker,
		uuidList(slices.SortedFunc(slices.Values(b.Directories), compareUuid)), cordoned)
	return s.String()
}

// versionRange is Kafka's VersionRange.toString: "7", "7+" (no upper
// bound) or "7-33".
func versionRange(lo, hi int16) string {
	switch {
	case lo == hi:
		return strconv.Itoa(int(lo))
	case hi == 1<<15-1:
		return strconv.Itoa(int(lo)) + "+"
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// compareUuid is Kafka's Uuid.compareTo: the most significant half first,
// each compared as a signed long.
func compareUuid(a, b record.Uuid) int {
	if c := cmp.Compare(int64(binary.BigEndian.Uint64(a[:8])), int64(binary.BigEndian.Uint64(b[:8]))); c != 0 {
		return c
	}
	return cmp.Compare(int64(binary.BigEndian.Uint64(a[8:])), int64(binary.BigEndian.Uint64(b[8:])))
}

// uuidList prints uuids as Java's List.toString and Arrays.toString do.
func uuidList(us []record.Uuid) string {
	parts := make([]string, len(us))
	for i, u := range us {
		parts[i] = u.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// intList prints ints as Java's Arrays.toString does.
func intList(v []int32) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(int(x))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
