package tui

import (
	"context"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// startTopicLoad asks for the topic whose load the topic-load key starts
// or stops. It offers the first topic without a load; with every topic
// loaded, the first one (enter then stops it); with none, a new name,
// which enter creates as the topic key would. The topic form holds the
// action: its Kind is load, its Partitions and ReplicationFactor those of
// a topic it has to create.
func (m *Model) startTopicLoad() {
	v := &m.view
	a := newTopicAction(v)
	a.Kind, a.RecordsPerSec, a.RecordBytes, a.StartedBy = cluster.ActLoad, loadRate, loadBytes, view.OriginScreen
	if len(v.Topics) > 0 {
		a.Topic = v.Topics[0].Name
		for _, t := range v.Topics {
			if _, loaded := v.TopicLoad(t.Name); !loaded {
				a.Topic = t.Name
				break
			}
		}
	}
	m.startTopic(a)
	m.topicLoadHint()
}

// loadPrompt asks for the topic of a topic-load action.
func loadPrompt(a cluster.Action) string {
	return fmt.Sprintf("load %d rec/s on topic: ", a.RecordsPerSec)
}

// topicLoadHint says in the status line what enter does with the name
// typed so far: stop that topic's load, start one, or create the topic
// first.
func (m *Model) topicLoadHint() {
	name := strings.TrimSpace(m.form.Value())
	a := m.topic
	var what string
	switch l, loaded := m.view.TopicLoad(name); {
	case name == "":
		what = "type a topic's name"
	case loaded:
		what = fmt.Sprintf("enter stops the load of %s (%s%s)", name, view.LoadRate(l.RecordsPerSec, l.RecordBytes), startedBy(l.StartedBy))
	case m.hasTopic(name):
		what = fmt.Sprintf("enter starts %s to %s through the brokers", view.LoadRate(a.RecordsPerSec, a.RecordBytes), name)
	default:
		what = fmt.Sprintf("enter creates %s (%d partitions, RF %d), then loads it", name, a.Partitions, a.ReplicationFactor)
	}
	m.status.set(levelInfo, what+"; esc cancels")
}

func (m *Model) hasTopic(name string) bool {
	_, ok := m.view.Topic(name)
	return ok
}

// confirmTopicLoad runs what the hint said for topic name.
func (m *Model) confirmTopicLoad(name string) tea.Cmd {
	a := m.topic
	a.Topic = name
	if _, loaded := m.view.TopicLoad(name); loaded {
		a.RecordsPerSec, a.RecordBytes = 0, 0
		return m.act(a)
	}
	if m.hasTopic(name) {
		return m.act(a)
	}
	create := cluster.Action{Kind: cluster.ActCreateTopic, Topic: name, Partitions: a.Partitions, ReplicationFactor: a.ReplicationFactor}
	return m.actAll(a.String(), create, a)
}

// actAll runs actions one after the other on their own goroutine, as act
// runs one, stopping at the first that fails; the answer says what each
// did.
func (m *Model) actAll(label string, actions ...cluster.Action) tea.Cmd {
	m.status.start(label)
	ctx, ctrl := m.ctx, m.ctrl
	return func() tea.Msg {
		var said []string
		for _, a := range actions {
			actx, cancel := context.WithTimeout(ctx, actionTimeout)
			res, err := ctrl.Do(actx, a)
			cancel()
			if err != nil {
				return actionMsg{label: label, err: fmt.Errorf("%s: %w", a, err)}
			}
			said = append(said, res.Message)
		}
		return actionMsg{label: label, res: cluster.Result{Message: strings.Join(said, "; ")}}
	}
}

// startedBy says who started a load, "" if unknown.
func startedBy(o view.Origin) string {
	if o == "" {
		return ""
	}
	return ", from " + o.Words()
}
