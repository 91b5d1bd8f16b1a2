package zookeeper

import (
	"bufio"

	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Monitor is what ZooKeeper's four-letter command mntr says of the
// server: its client connections (one a session here), znodes, ephemeral
// znodes, watches, and the requests it received since it started.
type Monitor struct {
	Connections int64
	Znodes      int64
	Ephemerals  int64
	Watches     int64
	// PacketsReceived counts every request since the server started.
	PacketsReceived int64
	Outstanding     int64
}

// Monitor asks the server mntr, within ctx.
func (s *Server) Monitor(ctx context.Context) (Monitor, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.Addr())
	if err != nil {
		return Monitor{}, fmt.Errorf("mntr: %w", err)
	}
	defer conn.Close()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(time.Second)
	}
	conn.SetDeadline(deadline)
	if _, err := conn.Write([]byte("mntr")); err != nil {
		return Monitor{}, fmt.Errorf("mntr: %w", err)
	}
	var m Monitor
	fields := map[string]*int64{
		"zk_num_alive_connections": &m.Connections,
		"zk_znode_count":           &m.Znodes,
		"zk_ephemerals_count":      &m.Ephemerals,
		"zk_watch_count":           &m.Watches,
		"zk_packets_received":      &m.PacketsReceived,
		"zk_outstanding_requests":  &m.Outstanding,
	}
	seen := 0
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "\t")
		if p, want := fields[k]; ok && want {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return Monitor{}, fmt.Errorf("mntr: %s %q is not a number", k, v)
			}
			*p = n
			seen++
		}
	}
	if seen == 0 {
		return Monitor{}, fmt.Errorf("mntr: no answer (%v)", sc.Err())
	}
	return m, nil
}
