package wire

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// peerGone reports whether the peer of nc closed or reset its side: the
// socket left the established state. A read cannot tell while unread
// bytes from the peer wait in front of its end of stream.
func peerGone(nc net.Conn) bool {
	sc, ok := nc.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	raw.Control(func(fd uintptr) {
		info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		gone = err == nil && info.State != unix.BPF_TCP_ESTABLISHED
	})
	return gone
}
