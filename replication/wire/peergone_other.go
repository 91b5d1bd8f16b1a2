//go:build !linux

package wire

import "net"

// peerGone reports false: without Linux's TCP_INFO, a connection whose
// peer pipelined bytes behind a request in flight notices the peer's
// close once that request is answered.
func peerGone(net.Conn) bool { return false }
