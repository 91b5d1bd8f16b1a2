package metasim

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// call sends a request from one address to a controller over the
// simulated network and delivers its response, both encoded and decoded
// at their versions as on a socket. A request that reaches a node that is
// down, or no controller, is refused at once, as a closed port would; a
// lost request or response is never answered, and the caller's timeout
// notices. answer runs only if alive still holds when the response lands.
func (s *Sim) call(from, to int32, req kmsg.Request, alive func() bool, answer func(kmsg.Response, error)) {
	req, err := roundTripRequest(req)
	if err != nil {
		s.rc.Fail(err)
		return
	}
	back := func(resp kmsg.Response, err error) {
		s.rc.Send(to, from, s.nextMsg(), func() {
			if alive() {
				answer(resp, err)
			}
		})
	}
	s.rc.Send(from, to, s.nextMsg(), func() {
		m := s.members[to]
		if m == nil || m.ctl == nil || !m.alive() {
			back(nil, fmt.Errorf("node %d: connection refused", to))
			return
		}
		m.ctl.Submit(req, func(resp kmsg.Response) {
			if resp != nil {
				resp.SetVersion(req.GetVersion()) // as the wire layer answers
			}
			resp, err := roundTripResponse(resp)
			if err != nil {
				s.rc.Fail(err)
				return
			}
			back(resp, nil)
		})
		m.dirty = true
		s.rc.Poke(to)
	})
}

func roundTripRequest(r kmsg.Request) (kmsg.Request, error) {
	out := kmsg.RequestForKey(r.Key())
	out.SetVersion(r.GetVersion())
	if err := out.ReadFrom(r.AppendTo(nil)); err != nil {
		return nil, fmt.Errorf("decode %s v%d: %w", kmsg.NameForKey(r.Key()), r.GetVersion(), err)
	}
	return out, nil
}

func roundTripResponse(r kmsg.Response) (kmsg.Response, error) {
	if r == nil {
		return nil, fmt.Errorf("controller answered nothing")
	}
	out := kmsg.ResponseForKey(r.Key())
	out.SetVersion(r.GetVersion())
	if err := out.ReadFrom(r.AppendTo(nil)); err != nil {
		return nil, fmt.Errorf("decode %s response v%d: %w", kmsg.NameForKey(r.Key()), r.GetVersion(), err)
	}
	return out, nil
}
