package main

// This file is where the kraftlab engine joins the benchmark.
//
// When the engine (replication/: the KRaft quorum state machine and its TCP
// driver) can run a 3-voter cluster, add here a System named "kraftlab" and
// return its factory below. Nothing else in bench/ changes: the registry puts
// kraftlab first, so it becomes the reference of every ratio column, and its
// rows appear in the table and the JSON.
//
// What the adapter needs from the engine:
//   - a constructor for a 3-voter quorum in one process, each voter with its
//     own listener on 127.0.0.1:0, its own data directory under dir, and a
//     flush policy: flush never (segments written without File.Sync) or flush
//     always (a voter syncs before its log end offset counts: the leader before
//     counting itself toward the high watermark, a follower before its next
//     Fetch reports the new offset);
//   - a way to wait for a stable leader (leader id and epoch agreed by all
//     voters), for Start;
//   - an Append(ctx, record) on the leader that returns once the high
//     watermark covers the record's offset, safe for many goroutines, and
//     failing (not hanging) when leadership is lost or the quorum is closed;
//   - a Close that stops every goroutine and closes every socket and file.
//
// For a fair comparison the adapter should batch no more than the engine
// does for any other client (no batching inside the adapter), and the
// followers must long-poll (a Fetch parked at the leader until data arrives).

// kraftlabFactories returns the kraftlab System's factory once the engine's
// adapter is written; until then it returns none and the report shows only
// the peers.
func kraftlabFactories() []factory { return nil }
