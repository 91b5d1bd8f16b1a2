package condition

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/view"
)

func TestHeldCondition(t *testing.T) {
	v := metadataView()
	c, err := Parse("held createtopics")
	if err != nil {
		t.Fatal(err)
	}
	if c.String() != "held CreateTopics" {
		t.Errorf("canonical form %q, want Kafka's spelling", c)
	}
	if ok, saw, err := c.Eval(&v); ok || err != nil || saw != "the links hold no message" {
		t.Errorf("nothing held: %t %q %v", ok, saw, err)
	}
	v.Messages = []view.Message{{ID: 7, From: 2, To: 1, API: "Fetch", Direction: view.MessageRequest}}
	v.HeldMessages = 1
	if ok, saw, _ := c.Eval(&v); ok || saw != "no CreateTopics among the 1 held messages" {
		t.Errorf("a Fetch held: %t %q", ok, saw)
	}
	v.Messages = append(v.Messages, view.Message{ID: 8, From: 101, To: 1, API: "CreateTopics", Direction: view.MessageRequest})
	v.HeldMessages = 2
	if ok, saw, _ := c.Eval(&v); !ok || saw != "#8 101→1 CreateTopics request held" {
		t.Errorf("CreateTopics held: %t %q", ok, saw)
	}
	if _, err := Parse("held Fetchh"); err == nil || !strings.Contains(err.Error(), `unknown API "Fetchh"`) {
		t.Errorf("a misspelt API: %v", err)
	}
}

func TestParkedCondition(t *testing.T) {
	c, err := Parse("parked")
	if err != nil {
		t.Fatal(err)
	}
	v := view.View{LeaderID: 1,
		CurrentVoters: []view.Replica{
			{NodeID: 1, State: view.StateRunning},
			{NodeID: 2, State: view.StateRunning, ParkedFetch: true},
			{NodeID: 3, State: view.StateRunning},
		},
		CurrentObservers: []view.Replica{{NodeID: 101, State: view.StateRunning, ParkedFetch: true}},
	}
	if ok, saw, _ := c.Eval(&v); ok || saw != "leader 1 holds the Fetch of 2, 101; not of 3" {
		t.Errorf("voter 3's Fetch in flight: %t %q", ok, saw)
	}
	v.CurrentVoters[2].State = view.StateKilled
	if ok, saw, _ := c.Eval(&v); !ok || saw != "leader 1 holds the Fetch of 2, 101" {
		t.Errorf("voter 3 killed, the others parked: %t %q", ok, saw)
	}
	v.CurrentVoters[1].ParkedFetch, v.CurrentObservers[0].ParkedFetch = false, false
	if ok, saw, _ := c.Eval(&v); ok || saw != "leader 1 holds the Fetch of none; not of 2, 101" {
		t.Errorf("nothing parked: %t %q", ok, saw)
	}
}
