//go:build !race

package wire

// raceAllocFactor: without the race detector, decoding allocates what it
// keeps.
const raceAllocFactor = 1
