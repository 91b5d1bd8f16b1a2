package node

import (
	"fmt"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
)

// Child names of /image and its subdirectories (Kafka's *Node.NAME).
const (
	imageName       = "image"
	provenanceName  = "provenance"
	featuresName    = "features"
	clusterName     = "cluster"
	topicsName      = "topics"
	configsName     = "configs"
	producerIdsName = "producerIds"
	nextProducerID  = "nextProducerId"
	metadataVersion = "metadataVersion"
	finalizedPrefix = "finalized_"
)

// imageNode is /image (Kafka's MetadataImageNode). Kafka's also has
// clientQuotas, acls and delegationToken; kraftlab's image holds none of
// them. scram is listed only when the image holds a credential: kraftlab's
// own controllers never write one, so on their logs the tree stays as it
// was.
type imageNode struct {
	dir
	img *image.MetadataImage
}

func (n imageNode) ChildNames() []string {
	names := []string{provenanceName, featuresName, clusterName, topicsName, configsName, producerIdsName}
	if !n.img.Scram().IsEmpty() {
		names = append(names, scramName)
	}
	return names
}

func (n imageNode) Child(name string) Node {
	switch name {
	case provenanceName:
		return provenanceLeaf(n.img.Provenance())
	case featuresName:
		return featuresNode{f: n.img.Features()}
	case clusterName:
		return clusterNode{c: n.img.Cluster()}
	case topicsName:
		return topicsNode{t: n.img.Topics()}
	case configsName:
		return configsNode{c: n.img.Configs()}
	case producerIdsName:
		return producerIdsNode{p: n.img.ProducerIds()}
	case scramName:
		return scramNode{s: n.img.Scram()}
	}
	return nil
}

func (n imageNode) Print(p Printer) { printChildren(n, p) }

// producerIdsNode is /image/producerIds (Kafka's ProducerIdsImageNode): its
// one file is the next producer id, -1 before any block was handed out.
type producerIdsNode struct {
	dir
	p image.ProducerIdsImage
}

func (producerIdsNode) ChildNames() []string { return []string{nextProducerID} }

func (n producerIdsNode) Child(name string) Node {
	if name == nextProducerID {
		return leafOf("%d", n.p.NextProducerID())
	}
	return nil
}

func (n producerIdsNode) Print(p Printer) { printChildren(n, p) }

// provenanceLeaf is ProvenanceNode's text: the last offset, its epoch and
// its append time in Java's ISO_ZONED_DATE_TIME at zone UTC.
func provenanceLeaf(p image.MetadataProvenance) leaf {
	return leafOf("offset %d, epoch %d, time %s", p.LastContainedOffset, p.LastContainedEpoch, isoZonedUTC(p.LastContainedLogTimeMs))
}

// isoZonedUTC formats ms as Java's DateTimeFormatter.ISO_ZONED_DATE_TIME
// prints Instant.ofEpochMilli(ms).atZone(ZoneId.of("UTC")): seconds always,
// the fraction only when non-zero and without trailing zeros, "Z" and the
// region "[UTC]"; a year past 9999 takes a "+".
func isoZonedUTC(ms int64) string {
	t := time.UnixMilli(ms).UTC()
	var b strings.Builder
	switch y := t.Year(); {
	case y > 9999:
		fmt.Fprintf(&b, "+%d", y)
	case y < 0:
		fmt.Fprintf(&b, "-%04d", -y)
	default:
		fmt.Fprintf(&b, "%04d", y)
	}
	fmt.Fprintf(&b, "-%02d-%02dT%02d:%02d:%02d", t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second())
	if ns := t.Nanosecond(); ns != 0 {
		b.WriteString(strings.TrimRight(fmt.Sprintf(".%09d", ns), "0"))
	}
	b.WriteString("Z[UTC]")
	return b.String()
}

// featuresNode is /image/features (Kafka's FeaturesImageNode).
type featuresNode struct {
	dir
	f *image.FeaturesImage
}

func (n featuresNode) ChildNames() []string {
	names := []string{metadataVersion}
	for _, f := range n.f.Names() {
		names = append(names, finalizedPrefix+f)
	}
	return names
}

// Child: metadataVersion prints as Kafka prints FeaturesImage's
// Optional<MetadataVersion> ("Optional[4.4-IV2]", "Optional.empty");
// finalized_<name> its level, 0 for a feature not finalized, as Kafka's
// getOrDefault does.
func (n featuresNode) Child(name string) Node {
	if name == metadataVersion {
		level, ok := n.f.MetadataVersion()
		if !ok {
			return leaf("Optional.empty")
		}
		if v, ok := MetadataVersionName(level); ok {
			return leafOf("Optional[%s]", v)
		}
		return leafOf("Optional[feature level %d]", level)
	}
	if f, ok := strings.CutPrefix(name, finalizedPrefix); ok {
		level, _ := n.f.Level(f)
		return leafOf("%d", level)
	}
	return nil
}

func (n featuresNode) Print(p Printer) { printChildren(n, p) }
