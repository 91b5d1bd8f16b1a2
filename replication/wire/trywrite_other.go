//go:build !unix

package wire

import (
	"net"
	"syscall"
)

// socketOf has no non-blocking write to offer here: every connection is
// written by its writer goroutine.
func socketOf(net.Conn) syscall.RawConn { return nil }

// tryWrite is never called: socketOf gives no socket to write.
func tryWrite(syscall.RawConn, []byte) (int, error) { return 0, nil }
