package control

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
)

func TestSay(t *testing.T) {
	s := serve(t)
	ctx := context.Background()
	ev, err := s.client.Say(ctx, "Now watch the leader die")
	if err != nil || ev.Kind != cluster.EventSay || ev.Message != "Now watch the leader die" || ev.Seq == 0 {
		t.Fatalf("Say = %+v, %v", ev, err)
	}
	var got []cluster.Event
	for e, err := range s.client.Events(ctx, 0, false) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == cluster.EventSay {
			got = append(got, e)
		}
	}
	if len(got) != 1 || got[0].Seq != ev.Seq {
		t.Errorf("say events on the stream: %+v", got)
	}
	for body, want := range map[string]string{
		``:                      "bad request body: empty",
		`{"text": ""}`:          "say needs some text",
		`{"text": "a\nb"}`:      "say text must be one line",
		`{"text": "x", "y": 1}`: `unknown field "y"`,
		`{"text": "` + strings.Repeat("x", cluster.MaxSayBytes+1) + `"}`: "at most 500 fit",
	} {
		code, out := s.raw(t, http.MethodPost, "/v1/say", body)
		if code != http.StatusBadRequest || !strings.Contains(out, want) {
			t.Errorf("say %.40q = %d %s; want 400 with %q", body, code, out, want)
		}
	}
	if code, _ := s.raw(t, http.MethodGet, "/v1/say", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /v1/say = %d", code)
	}
	s.pg.Close()
	if _, err := s.client.Say(ctx, "too late"); !errors.Is(err, cluster.ErrClosed) {
		t.Errorf("say after close = %v", err)
	}
}

// follower resolves on the playground, and "no follower" keeps its kind
// across the socket.
func TestFollowerReference(t *testing.T) {
	s := serve(t)
	ctx := context.Background()
	follower, _ := condition.ParseNodeRef("follower")
	res, err := s.client.Do(ctx, cluster.Action{Kind: cluster.ActIsolate, Node: follower})
	if err != nil || len(res.Nodes) != 1 || res.Nodes[0] != 2 {
		t.Fatalf("isolate follower = %+v, %v", res, err)
	}
	target, _ := condition.ParseNodeRef("target")
	if res, err := s.client.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: target}); err != nil || res.Nodes[0] != 2 {
		t.Fatalf("kill target = %+v, %v", res, err)
	}
	if res, err := s.client.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: follower}); err != nil || res.Nodes[0] != 3 {
		t.Fatalf("kill follower = %+v, %v", res, err)
	}
	_, err = s.client.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: follower})
	if !errors.Is(err, condition.ErrNoFollower) && !errors.Is(err, condition.ErrNoLeader) {
		t.Errorf("kill follower with none = %v", err)
	}
}

func TestNoFollowerCrossesTheSocket(t *testing.T) {
	err := errors.Join(condition.ErrNoFollower)
	if statusOf(err) != http.StatusConflict || codeOf(err) != "no-follower" {
		t.Errorf("no follower: %d %q", statusOf(err), codeOf(err))
	}
	if !errors.Is(&APIError{Code: "no-follower"}, condition.ErrNoFollower) {
		t.Error("the client does not match no-follower")
	}
}
