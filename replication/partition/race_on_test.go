//go:build race

package partition

// raceEnabled: the race detector is on. It makes sync.Pool drop what is
// put back at random, so allocation bounds that rest on pooling do not
// hold.
const raceEnabled = true
