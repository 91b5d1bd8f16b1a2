package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// Client talks to a playground's control API. It implements
// cluster.Operator.
type Client struct {
	session Session
	http    *http.Client
}

// NewClient returns a client for the session. It connects lazily.
func NewClient(s Session) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return s.Dial(ctx) },
	}
	return &Client{session: s, http: &http.Client{Transport: tr}}
}

// Session returns the session the client talks to.
func (c *Client) Session() Session { return c.session }

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// The host part of every URL; the transport ignores it and dials the socket.
const base = "http://kraftlab"

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return decodeError(resp)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("read answer of %s %s: %w", method, path, err)
	}
	return nil
}

// transportError unwraps the no-session case and names the session otherwise.
func (c *Client) transportError(ctx context.Context, err error) error {
	var ns *NoSessionError
	if errors.As(err, &ns) {
		return ns
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("talk to playground %q: %w", c.session.Name, err)
}

func decodeError(resp *http.Response) error {
	var eb errorBody
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if json.Unmarshal(b, &eb) != nil || eb.Error == "" {
		eb.Error = fmt.Sprintf("control API answered %s", resp.Status)
	}
	return &APIError{Status: resp.StatusCode, Code: eb.Code, Message: eb.Error}
}

// Status implements cluster.Operator.
func (c *Client) Status(ctx context.Context) (view.View, error) {
	var v view.View
	err := c.do(ctx, http.MethodGet, "/v1/status", nil, &v)
	return v, err
}

// Do implements cluster.Operator.
func (c *Client) Do(ctx context.Context, a cluster.Action) (cluster.Result, error) {
	var res cluster.Result
	var path string
	var body any
	switch a.Kind {
	case cluster.ActKill, cluster.ActStart, cluster.ActStop, cluster.ActIsolate, cluster.ActSnapshot, cluster.ActWipe:
		path = fmt.Sprintf("/v1/nodes/%s/%s", url.PathEscape(a.Node.String()), a.Kind)
	case cluster.ActDisk:
		path = fmt.Sprintf("/v1/nodes/%s/disk", url.PathEscape(a.Node.String()))
		body = diskBody{DelayMs: a.DelayMs}
	case cluster.ActResign:
		path = "/v1/resign"
	case cluster.ActMark:
		path = "/v1/mark"
	case cluster.ActHeal:
		if a.Node.IsZero() && a.Peer.IsZero() {
			path = "/v1/heal"
			break
		}
		if a.Peer.IsZero() && !a.OneWay {
			// Every link of one node.
			path = fmt.Sprintf("/v1/nodes/%s/%s", url.PathEscape(a.Node.String()), a.Kind)
			break
		}
		fallthrough
	case cluster.ActPartition, cluster.ActLink:
		path = fmt.Sprintf("/v1/links/%s/%s/%s", url.PathEscape(a.Node.String()), url.PathEscape(a.Peer.String()), a.Kind)
		body = linkBody{OneWay: a.OneWay, DelayMs: a.DelayMs, JitterMs: a.JitterMs, Loss: a.Loss}
	case cluster.ActLoad:
		path = "/v1/load"
		body = loadBody{RecordsPerSec: a.RecordsPerSec, RecordBytes: a.RecordBytes, Topic: a.Topic, StartedBy: a.StartedBy}
	case cluster.ActCreateTopic:
		path = "/v1/topics"
		body = topicBody{Topic: a.Topic, Partitions: a.Partitions, ReplicationFactor: a.ReplicationFactor, Configs: a.Configs}
	case cluster.ActDeleteTopic:
		path = fmt.Sprintf("/v1/topics/%s/delete", url.PathEscape(a.Topic))
	case cluster.ActElectLeaders:
		path = "/v1/elect-leaders"
		body = electBody{TopicPartitions: a.TopicPartitions, Unclean: a.Unclean}
	case cluster.ActReassign:
		path = "/v1/reassign"
		body = reassignBody{Mode: a.Reassign, TopicPartitions: a.TopicPartitions, Replicas: a.Replicas, Throttle: a.Throttle}
	case cluster.ActClock:
		path = "/v1/clock"
		body = clockBody{Clock: a.Clock, Slow: a.Slow, AdvanceMs: a.AdvanceMs}
	case cluster.ActAddController:
		path = "/v1/controllers"
		body = addBody{Observer: a.Observer, Node: a.Node}
	case cluster.ActRemoveController:
		path = fmt.Sprintf("/v1/controllers/%s/remove", url.PathEscape(a.Node.String()))
	case cluster.ActUpgradeKRaftVersion:
		path = "/v1/controllers/upgrade"
	case cluster.ActMessages, cluster.ActStep, cluster.ActDrop:
		path = messagePath(a.Kind)
		body = messageBodyOf(a)
	case cluster.ActRun:
		path, body = "/v1/sim/run", runBody{Until: a.Until, LimitMs: a.AdvanceMs}
	case cluster.ActRewind:
		path, body = "/v1/sim/rewind", rewindBody{Step: a.Step, Branch: a.Branch, By: a.By}
	case cluster.ActHistory:
		path = "/v1/sim/history"
	default:
		return res, fmt.Errorf("unknown action %q", a.Kind)
	}
	err := c.do(ctx, http.MethodPost, path, body, &res)
	return res, err
}

// Events implements cluster.Operator. A stream the server ends (because
// the playground shut down) ends the iteration without an error.
func (c *Client) Events(ctx context.Context, after uint64, follow bool) iter.Seq2[cluster.Event, error] {
	return func(yield func(cluster.Event, error) bool) {
		q := url.Values{"after": {strconv.FormatUint(after, 10)}}
		if follow {
			q.Set("follow", "1")
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/events?"+q.Encode(), nil)
		if err != nil {
			yield(cluster.Event{}, err)
			return
		}
		resp, err := c.http.Do(req)
		if err != nil {
			yield(cluster.Event{}, c.transportError(ctx, err))
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			yield(cluster.Event{}, decodeError(resp))
			return
		}
		dec := json.NewDecoder(resp.Body)
		for {
			var ev cluster.Event
			err := dec.Decode(&ev)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				if ctx.Err() != nil {
					err = ctx.Err()
				} else {
					err = fmt.Errorf("event stream from playground %q broke: %w", c.session.Name, err)
				}
				yield(cluster.Event{}, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Down implements cluster.Operator: it asks the playground to shut down
// and waits, until ctx ends, for its control socket to go away.
func (c *Client) Down(ctx context.Context) error {
	if err := c.do(ctx, http.MethodPost, "/v1/down", nil, nil); err != nil {
		return err
	}
	c.Close()
	for {
		conn, err := c.session.Dial(ctx)
		var ns *NoSessionError
		if errors.As(err, &ns) {
			return nil
		}
		if err == nil {
			conn.Close()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("playground %q still answers after the shutdown request: %w", c.session.Name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

var _ cluster.Operator = (*Client)(nil)
