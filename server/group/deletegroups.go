package group

import (
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleDeleteGroups deletes empty groups with their offsets: it writes a
// tombstone for each committed offset and one for the group, and answers
// once they are committed. A group with members is NON_EMPTY_GROUP, an
// unknown one GROUP_ID_NOT_FOUND.
func (c *Coordinator) handleDeleteGroups(req *wire.Request) {
	c.deleteGroups(req.Body.(*kmsg.DeleteGroupsRequest), req.Respond)
}

// deleteGroups is handleDeleteGroups's work, answered through answer.
func (c *Coordinator) deleteGroups(r *kmsg.DeleteGroupsRequest, answer func(kmsg.Response)) {
	resp := kmsg.NewPtrDeleteGroupsResponse()
	resp.Groups = make([]kmsg.DeleteGroupsResponseGroup, len(r.Groups))
	var wg sync.WaitGroup
	for i, id := range r.Groups {
		dg := &resp.Groups[i]
		*dg = kmsg.NewDeleteGroupsResponseGroup()
		dg.Group = id
		if id == "" {
			dg.ErrorCode = kerr.InvalidGroupID.Code
			continue
		}
		s, code := c.shardFor(id)
		if code != 0 {
			dg.ErrorCode = code
			continue
		}
		wg.Add(1)
		queued := false
		code = s.do(func(time.Time) {
			if cg := s.cgroups[id]; cg != nil {
				if !cg.IsEmpty() {
					dg.ErrorCode = kerr.NonEmptyGroup.Code
					return
				}
				var recs []storage.Record
				for tp := range s.offsets[id] {
					recs = append(recs, OffsetCommitRecord(id, tp, nil))
				}
				cg.Delete()
				recs = append(recs, cg.TakeRecords()...)
				delete(s.cgroups, id)
				delete(s.offsets, id)
				queued = true
				s.queueLocked(recs, func(_ int64, code int16) {
					defer wg.Done()
					dg.ErrorCode = appendError(code, false)
				})
				return
			}
			g := s.groups[id]
			switch {
			case g == nil || g.State() == Dead:
				dg.ErrorCode = kerr.GroupIDNotFound.Code
				return
			case !g.IsEmpty():
				dg.ErrorCode = kerr.NonEmptyGroup.Code
				return
			}
			var recs []storage.Record
			for tp := range s.offsets[id] {
				recs = append(recs, OffsetCommitRecord(id, tp, nil))
			}
			recs = append(recs, GroupMetadataRecord(id, nil))
			queued = true
			// The group goes now, as Kafka replays its own records when
			// it writes them: what a client does with the id from here
			// on is a new group, whose records follow the tombstones in
			// the log. Should the write fail, the error says so and the
			// next load brings the group back.
			g.Delete(kerr.GroupIDNotFound.Code)
			delete(s.groups, id)
			delete(s.offsets, id)
			s.queueLocked(recs, func(_ int64, code int16) {
				defer wg.Done()
				dg.ErrorCode = appendError(code, false)
			})
		})
		if code != 0 {
			dg.ErrorCode = code
		}
		if !queued {
			wg.Done()
		}
	}
	// The appends answer on other goroutines: the answer waits off the
	// connection's.
	go func() {
		wg.Wait()
		answer(resp)
	}()
}
