package controller

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// assignReplicasToDirs is Kafka's ReplicationControlManager
// handleAssignReplicasToDirs (KIP-858): a broker says which of its log
// directories holds each of its replicas, and the partitions record it. A
// replica assigned to a directory the broker does not have online —
// record.DirectoryLost is how a broker reports a damaged replica — also
// leaves the ISR and any leadership, as when its directory goes offline
// (handleDirectoriesOffline). Kafka writes the directory and the
// leadership change as two records; here they are one.
func (c *QuorumController) assignReplicasToDirs(r *kmsg.AssignReplicasToDirsRequest) outcome {
	resp := kmsg.NewPtrAssignReplicasToDirsResponse()
	o := outcome{resp: resp}
	img := c.st.working
	v := c.versions(img)
	b := img.Cluster().Broker(r.BrokerID)
	switch {
	case !v.directoriesInRecs:
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		return o
	case b == nil:
		resp.ErrorCode = kerr.BrokerIDNotRegistered.Code
		return o
	case b.Epoch != r.BrokerEpoch:
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
		return o
	}
	pending := image.NewMetadataDelta(img) // two assignments of one partition see each other
	for _, d := range r.Directories {
		dir := record.Uuid(d.ID)
		online := b.HasOnlineDir(dir)
		rd := kmsg.NewAssignReplicasToDirsResponseDirectory()
		rd.ID = d.ID
		for _, t := range d.Topics {
			rt := kmsg.NewAssignReplicasToDirsResponseDirectoryTopic()
			rt.TopicID = t.TopicID
			topic := img.Topics().Topic(record.Uuid(t.TopicID))
			for _, pd := range t.Partitions {
				rp := kmsg.NewAssignReplicasToDirsResponseDirectoryTopicPartition()
				rp.Partition = pd.Partition
				var p *image.PartitionRegistration
				switch {
				case topic == nil:
					rp.ErrorCode = kerr.UnknownTopicID.Code
				case topic.Partition(pd.Partition) == nil:
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				default:
					p = topic.Partition(pd.Partition)
					if td := pending.TopicsDelta(); td != nil && td.Changed(topic.ID()) != nil {
						p = td.Changed(topic.ID()).Partition(pd.Partition)
					}
					if !p.HasReplica(r.BrokerID) {
						rp.ErrorCode = kerr.NotLeaderForPartition.Code
					}
				}
				rt.Partitions = append(rt.Partitions, rp)
				if rp.ErrorCode != 0 {
					continue
				}
				ch, evs := c.assignDir(img, topic, pd.Partition, p, r.BrokerID, dir, online, v)
				if ch == nil {
					continue
				}
				if err := pending.Replay(ch); err != nil {
					rt.Partitions[len(rt.Partitions)-1].ErrorCode = kerr.UnknownServerError.Code
					continue
				}
				o.records = append(o.records, ch)
				o.events = append(o.events, evs...)
			}
			rd.Topics = append(rd.Topics, rt)
		}
		resp.Directories = append(resp.Directories, rd)
	}
	return o
}

// assignDir is the change that puts broker's replica of partition id in
// dir, nil if it is there already; offline, the replica also leaves the
// ISR and the leadership.
func (c *QuorumController) assignDir(img *image.MetadataImage, topic *image.TopicImage, id int32, p *image.PartitionRegistration,
	broker int32, dir record.Uuid, online bool, v versions) (*record.PartitionChangeRecord, []Event) {
	var ch *record.PartitionChangeRecord
	var evs []Event
	reason := fmt.Sprintf("broker %d's replica is back in an online log directory", broker)
	if !online {
		reason = fmt.Sprintf("broker %d's replica is in a lost log directory: its files lost records", broker)
		target := without(p.Isr, broker)
		var how elected
		ch, how = c.changeFor(img, topic, id, p, target, leaderAcceptor(img, p, acceptableLeader(img, broker, -1))).build()
		if ch != nil {
			evs = changeEvents(topic.Name(), ch, p, how, reason)
		}
	}
	if p.Directory(broker) == dir {
		return ch, evs
	}
	if ch == nil {
		ch = record.NewPartitionChangeRecord(topic.ID(), id)
		ch.Version = v.partitionChange
		evs = []Event{changeEvent(topic.Name(), ch, p, reason)}
	}
	ch.Directories = slices.Clone(p.Directories)
	ch.Directories[slices.Index(p.Replicas, broker)] = dir
	return ch, evs
}
