package engine

import (
	"fmt"
	"github.com/dustin/go-humanize/english"
	"github.com/kraftlab/kraftlab/cluster"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/server"
)

// publishController turns node id's quorum controller event into a
// playground event. Broker events are the broker's own in the stream.
func (e *engine) publishController(id int32) func(controller.Event) {
	return func(ev controller.Event) {
		kind, node, msg, ok := narrateController(id, ev)
		if ok {
			e.events.Publish(cluster.Event{Kind: kind, Node: node, Epoch: ev.Epoch, Message: msg})
		}
	}
}

func narrateController(id int32, ev controller.Event) (kind cluster.EventKind, node int32, msg string, ok bool) {
	switch ev.Kind {
	case controller.EventActivated:
		return cluster.EventControllerActivated, id, fmt.Sprintf("became the active controller of epoch %d, ready %s after it learnt it leads: it serves from its own metadata image, nothing reloaded", ev.Epoch, roundDuration(ev.Took)), true
	case controller.EventDeactivated:
		return cluster.EventControllerDeactivated, id, fmt.Sprintf("is no longer the active controller: %s", ev.Reason), true
	case controller.EventBrokerRegistered:
		return cluster.EventBrokerRegistered, ev.Broker, fmt.Sprintf("registered with the active controller %d at broker epoch %d; fenced until it has applied the metadata up to its registration", id, ev.BrokerEpoch), true
	case controller.EventBrokerUnfenced:
		return cluster.EventBrokerUnfenced, ev.Broker, fmt.Sprintf("unfenced by controller %d: its heartbeat reported metadata applied up to offset %d, at or past its own registration record (offset %d), the only catch-up Kafka asks for; what was committed after it, the broker applies at its own pace",
			id, ev.MetadataOffset, ev.RegistrationOffset), true
	case controller.EventBrokerSessionTimedOut:
		return cluster.EventBrokerFenced, ev.Broker, fmt.Sprintf("fenced by controller %d: %s", id, ev.Reason), true
	case controller.EventBrokerFenced:
		return cluster.EventBrokerFenced, ev.Broker, fmt.Sprintf("fenced by controller %d at its own request: %s", id, ev.Reason), true
	case controller.EventBrokerControlledShutdown:
		return cluster.EventBrokerShutdown, ev.Broker, fmt.Sprintf("began a controlled shutdown: controller %d moves its leaderships away first", id), true
	case controller.EventTopicCreated:
		return cluster.EventTopicCreated, id, fmt.Sprintf("committed topic %s (id %s, %d %s)", ev.Topic, ev.TopicID, ev.Partitions, english.PluralWord(int(ev.Partitions), "partition", "")), true
	case controller.EventTopicDeleted:
		return cluster.EventTopicDeleted, id, fmt.Sprintf("committed the deletion of topic %s (id %s)", ev.Topic, ev.TopicID), true
	case controller.EventPartitionsCreated:
		return cluster.EventTopicCreated, id, fmt.Sprintf("committed topic %s's growth to %d partitions", ev.Topic, ev.Partitions), true
	case controller.EventPartitionChanged:
		return cluster.EventPartitionChange, id, fmt.Sprintf("%s-%d: leader %s, isr %s (%s)", ev.Topic, ev.Partition, leaderWord(ev.Leader), idList(ev.Isr), ev.Reason), true
	case controller.EventRecoveryElection:
		return cluster.EventRecoveryElection, id, fmt.Sprintf("%s-%d: RECOVERY election: %s; it leads alone, RECOVERING, and the others fetch from it",
			ev.Topic, ev.Partition, ev.Reason), true
	case controller.EventRecoveryWaiting:
		return cluster.EventRecoveryElection, id, fmt.Sprintf("%s-%d: no leader: %s", ev.Topic, ev.Partition, ev.Reason), true
	case controller.EventUncleanLeaderElection:
		return cluster.EventPartitionChange, id, fmt.Sprintf("%s-%d: UNCLEAN leader election: no member of isr %s alive, so broker %d, outside it, leads with isr %s; records only the old isr had may be lost",
			ev.Topic, ev.Partition, idList(ev.LastIsr), ev.Leader, idList(ev.Isr)), true
	}
	return "", 0, "", false
}

// publishLifecycle turns broker id's lifecycle event into a playground
// event.
func (e *engine) publishLifecycle(id int32) func(server.LifecycleEvent) {
	return func(ev server.LifecycleEvent) {
		if msg, ok := narrateLifecycle(ev); ok {
			e.events.Publish(cluster.Event{Kind: cluster.EventBrokerState, Node: id, Message: msg})
		}
	}
}

// narrateLifecycle puts a broker's lifecycle event into the event log's
// words, with the meaning Kafka's BrokerLifecycleManager gives its states:
// STARTING until a heartbeat answer says the broker has caught up (applied
// the metadata log up to its own registration), RECOVERY while caught up
// but still fenced, RUNNING once the controller unfenced it. ok is false
// for the registration, which shows as the controller's event.
func narrateLifecycle(ev server.LifecycleEvent) (msg string, ok bool) {
	switch ev.Kind {
	case server.EventStateChanged:
		msg = fmt.Sprintf("is %s", ev.State)
		switch ev.State {
		case server.BrokerStarting:
			msg += ": it registers with the active controller and replays the metadata log, until a heartbeat answer says it has caught up to its own registration"
		case server.BrokerRecovery:
			msg += ": caught up with the metadata log to its own registration, still fenced until the controller unfences it"
		case server.BrokerRunning:
			msg += ": the controller unfenced it; it may lead partitions"
		case server.BrokerPendingControlledShutdown:
			msg += ": it waits for the controller to move its leaderships away"
		case server.BrokerShuttingDown:
			if ev.Controller < 0 {
				msg += ": it goes without a controller's answer (it had nothing to hand over, or no controlled shutdown finished)"
			} else {
				msg += ": the controller let it go"
			}
		}
		return msg, true
	case server.EventRegistrationTimedOut:
		return "gave up: no controller accepted its registration in time; it shuts down", true
	case server.EventRegistrationRefused:
		return fmt.Sprintf("registration refused by controller %d: its previous incarnation's session is still alive. It retries every heartbeat interval and hosts no partition until the session times out, the controller fences the old incarnation and moves its leaderships, and it registers", ev.Controller), true
	}
	return "", false
}

// publishReplica turns broker id's replica news into playground events.
func (e *engine) publishReplica(id int32) func(server.ReplicaEvent) {
	return func(ev server.ReplicaEvent) {
		tp := fmt.Sprintf("%s-%d", ev.Topic, ev.Partition)
		switch ev.Kind {
		case server.ReplicaDamaged:
			e.events.Publish(cluster.Event{Kind: cluster.EventReplicaDamaged, Node: id, Message: fmt.Sprintf(
				"replica %s is DAMAGED: %s. It reports its log directory lost for %s, so it neither leads nor is followed while an intact replica may hold those records, and it fetches them back",
				tp, ev.Damage, tp)})
		case server.ReplicaRepaired:
			msg := fmt.Sprintf("replica %s repaired: it fetched back offsets up to %d from leader %d; its log directory is online again and it may rejoin the ISR",
				tp, ev.LogEndOffset, ev.Leader)
			if ev.Leader == id {
				msg = fmt.Sprintf("replica %s leads with what it has (log end %d): no intact replica was left, so offsets %d-%d are lost",
					tp, ev.LogEndOffset, ev.Damage.From, ev.Damage.To-1)
			}
			e.events.Publish(cluster.Event{Kind: cluster.EventReplicaRepaired, Node: id, Message: msg})
		case server.ReplicaTruncated:
			e.events.Publish(cluster.Event{Kind: cluster.EventTruncation, Node: id, Message: narrateReplicaTruncated(tp, ev)})
		}
	}
}

// narrateReplicaTruncated tells of a follower's truncation in the words of
// Kafka's fetcher, which logs each one ("Truncating partition ...").
func narrateReplicaTruncated(tp string, ev server.ReplicaEvent) string {
	n := ev.TruncatedFrom - ev.LogEndOffset
	return fmt.Sprintf("truncated its replica of %s from log end %d to %d, where it agrees with leader %d's log: it drops %s the leader's log does not have and fetches the leader's from there",
		tp, ev.TruncatedFrom, ev.LogEndOffset, ev.Leader, english.Plural(int(n), "record", ""))
}

// topicsApplied is a broker's loader publisher that reports each topic the
// broker learns of, and how long after the controller appended its record.
func (e *engine) topicsApplied(id int32) loader.Publisher {
	return loader.PublisherFuncs{Update: func(d *image.MetadataDelta, img *image.MetadataImage, m loader.Manifest) {
		td := d.TopicsDelta()
		if td == nil || m.Kind != loader.LogDelta {
			return
		}
		var names []string
		for _, t := range td.ChangedTopics() {
			if t.Created() {
				names = append(names, t.Name())
			}
		}
		if len(names) == 0 {
			return
		}
		after := e.clock.Since(time.UnixMilli(m.Provenance.LastContainedLogTimeMs))
		msg := fmt.Sprintf("applied topic %s from the metadata log at offset %d, %s after the controller appended it", strings.Join(names, ", "), m.Provenance.LastContainedOffset, roundDuration(after))
		e.events.Publish(cluster.Event{Kind: cluster.EventTopicApplied, Node: id, Message: msg})
	}}
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < 0:
		return 0
	case d < time.Millisecond:
		return d.Round(time.Microsecond)
	case d < time.Second:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

func leaderWord(id int32) string {
	if id < 0 {
		return "none"
	}
	return fmt.Sprint(id)
}

func idList(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return "[" + strings.Join(s, ",") + "]"
}
