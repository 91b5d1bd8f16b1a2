//go:build !unix

package benchkit

import "time"

// cpuTime is unavailable without getrusage; the report then leaves the CPU
// column empty.
func cpuTime() (time.Duration, bool) { return 0, false }
