package wire

import "errors"

var (
	// ErrFrameTooLarge reports a frame whose size prefix exceeds the
	// configured maximum; the connection is closed before anything is
	// allocated for it.
	ErrFrameTooLarge = errors.New("frame too large")

	// ErrClosed reports a request to a closed Client.
	ErrClosed = errors.New("closed")

	// ErrLinkDown reports a request refused or cut because the link from
	// the client's node to the server's node is down (a partition).
	ErrLinkDown = errors.New("link down")
)
