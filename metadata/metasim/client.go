package metasim

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// client is an admin client at its own address, talking to the
// controllers directly (as --bootstrap-controller tools do): it sends one
// CreateTopics, CreatePartitions or DeleteTopics at a time and tries the
// next controller on NOT_CONTROLLER, a refused connection or a timeout.
// What it is told succeeded, the reference checks against the committed
// log.
type client struct {
	s        *Sim
	id       int32
	target   int32
	inflight uint64
	// created, deleted and grown count the answers of success.
	created, deleted, grown int
}

// backingOff marks a request between two tries.
const backingOff = 1<<64 - 1

func newClient(s *Sim, id int32) *client {
	return &client{s: s, id: id, target: 1 + id%controllers}
}

// busy reports whether a request is awaited.
func (c *client) busy() bool { return c.inflight != 0 }

// createTopic asks for a topic; answered reports the topic's error code
// (noAnswer when no controller answered in time).
func (c *client) createTopic(name string, partitions int32, rf int16, answered func(code int16), configs ...TopicConfig) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	req.TimeoutMillis = 30000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, rf
	for _, tc := range configs {
		cfg := kmsg.NewCreateTopicsRequestTopicConfig()
		cfg.Name, cfg.Value = tc.Name, kmsg.StringPtr(tc.Value)
		t.Configs = append(t.Configs, cfg)
	}
	req.Topics = append(req.Topics, t)
	c.s.record("client %d: create topic %s (%d partitions, rf %d) at controller %d", c.id, name, partitions, rf, c.target)
	c.do(req, func(resp kmsg.Response) int16 {
		r := resp.(*kmsg.CreateTopicsResponse)
		if len(r.Topics) != 1 {
			c.s.rc.Fail(fmt.Errorf("client: CreateTopics answered %d topics", len(r.Topics)))
			return -1
		}
		rt := r.Topics[0]
		if rt.ErrorCode == 0 {
			id := record.Uuid(rt.TopicID)
			c.s.record("client %d: created %s (%v)", c.id, name, id)
			c.created++
			if err := c.s.ref.acknowledged(name, id); err != nil {
				c.s.rc.Fail(err)
			}
		}
		return rt.ErrorCode
	}, answered)
}

// deleteTopic asks for a topic's deletion.
func (c *client) deleteTopic(name string, answered func(code int16)) {
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	req.TimeoutMillis = 30000
	t := kmsg.NewDeleteTopicsRequestTopic()
	t.Topic = kmsg.StringPtr(name)
	req.Topics = append(req.Topics, t)
	c.s.record("client %d: delete topic %s at controller %d", c.id, name, c.target)
	c.do(req, func(resp kmsg.Response) int16 {
		r := resp.(*kmsg.DeleteTopicsResponse)
		if len(r.Topics) != 1 {
			c.s.rc.Fail(fmt.Errorf("client: DeleteTopics answered %d topics", len(r.Topics)))
			return -1
		}
		if r.Topics[0].ErrorCode == 0 {
			c.s.record("client %d: deleted %s", c.id, name)
			c.deleted++
			if err := c.s.ref.deleteAcknowledged(name, record.Uuid(r.Topics[0].TopicID)); err != nil {
				c.s.rc.Fail(err)
			}
		}
		return r.Topics[0].ErrorCode
	}, answered)
}

// TopicConfig is one config of a topic to create.
type TopicConfig struct{ Name, Value string }

// CreateTopic has the first client ask for a topic, with configs;
// answered reports the topic's error code, or a negative one when no
// controller answered in time.
func (s *Sim) CreateTopic(name string, partitions int32, rf int16, answered func(code int16), configs ...TopicConfig) {
	s.client.createTopic(name, partitions, rf, answered, configs...)
}

// noAnswer is the code answered reports when no controller answered.
const noAnswer int16 = -1000

// giveUp is how long the client tries a request (Kafka's
// default.api.timeout.ms is a minute; an election takes a few seconds).
const giveUp = 15 * time.Second

// createPartitions asks for a topic to grow to count partitions.
func (c *client) createPartitions(name string, count int32, answered func(code int16)) {
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Version = 3
	req.TimeoutMillis = 30000
	t := kmsg.NewCreatePartitionsRequestTopic()
	t.Topic, t.Count = name, count
	req.Topics = append(req.Topics, t)
	c.s.record("client %d: grow topic %s to %d partitions at controller %d", c.id, name, count, c.target)
	gen := c.s.ref.topicRecords[name]
	c.do(req, func(resp kmsg.Response) int16 {
		r := resp.(*kmsg.CreatePartitionsResponse)
		if len(r.Topics) != 1 {
			c.s.rc.Fail(fmt.Errorf("client: CreatePartitions answered %d topics", len(r.Topics)))
			return -1
		}
		if r.Topics[0].ErrorCode == 0 {
			c.s.record("client %d: grew %s to %d partitions", c.id, name, count)
			c.grown++
			if err := c.s.ref.growthAcknowledged(name, gen, count); err != nil {
				c.s.rc.Fail(err)
			}
		}
		return r.Topics[0].ErrorCode
	}, answered)
}

// do sends req until a controller answers it other than NOT_CONTROLLER,
// for at most giveUp.
func (c *client) do(req kmsg.Request, read func(kmsg.Response) int16, answered func(code int16)) {
	deadline := c.s.now().Add(giveUp)
	// The backoff doubles with each refusal, up to a second, as an
	// election takes a few.
	backoff := 50 * time.Millisecond
	var try func()
	try = func() {
		if !c.s.now().Before(deadline) {
			c.inflight = 0
			c.s.record("client %d: no controller answered", c.id)
			if answered != nil {
				answered(noAnswer)
			}
			return
		}
		id := c.s.nextMsg()
		c.inflight = id
		to := c.target
		c.s.call(c.id, to, req, func() bool { return c.inflight == id }, func(resp kmsg.Response, err error) {
			if err != nil || notController(resp) {
				why := "NOT_CONTROLLER"
				if err != nil {
					why = err.Error()
				}
				c.target = c.target%controllers + 1
				c.s.record("client %d: controller %d: %s; next try at controller %d in %v", c.id, to, why, c.target, min(2*backoff, time.Second))
				c.inflight = backingOff // its timeout must not try again
				backoff = min(2*backoff, time.Second)
				c.s.rc.After(backoff, try)
				return
			}
			c.inflight = 0
			code := read(resp)
			if code != 0 {
				c.s.record("client %d: controller %d answered %v", c.id, to, kerr.ErrorForCode(code))
			}
			if answered != nil {
				answered(code)
			}
		})
		c.s.rc.After(requestLimit, func() {
			if c.inflight == id {
				c.target = c.target%controllers + 1
				c.s.record("client %d: no answer from controller %d in %v; next try at controller %d", c.id, to, requestLimit, c.target)
				try()
			}
		})
	}
	try()
}

func notController(resp kmsg.Response) bool {
	code := int16(0)
	switch r := resp.(type) {
	case *kmsg.CreateTopicsResponse:
		if len(r.Topics) > 0 {
			code = r.Topics[0].ErrorCode
		}
	case *kmsg.DeleteTopicsResponse:
		if len(r.Topics) > 0 {
			code = r.Topics[0].ErrorCode
		}
	case *kmsg.CreatePartitionsResponse:
		if len(r.Topics) > 0 {
			code = r.Topics[0].ErrorCode
		}
	}
	return code == kerr.NotController.Code
}
