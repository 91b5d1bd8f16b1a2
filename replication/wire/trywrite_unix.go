//go:build unix

package wire

import (
	"errors"
	"net"
	"syscall"
)

// socketOf returns nc's file descriptor access, or nil if nc has none (a
// net.Pipe in tests): such a connection is always written by its writer
// goroutine.
func socketOf(nc net.Conn) syscall.RawConn {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// tryWrite writes as much of b as the socket's send buffer takes now,
// without waiting: the caller (often a node's event loop) must never block
// on a peer that stopped reading. It returns how many bytes went out; the
// rest is for a writer goroutine that may wait.
func tryWrite(rc syscall.RawConn, b []byte) (int, error) {
	var n int
	var werr error
	err := rc.Write(func(fd uintptr) bool {
		n, werr = syscall.Write(int(fd), b)
		return true // never wait for the socket to become writable
	})
	if err != nil {
		return 0, err
	}
	if errors.Is(werr, syscall.EAGAIN) || errors.Is(werr, syscall.EINTR) {
		return 0, nil
	}
	if werr != nil {
		return 0, werr
	}
	return n, nil
}
