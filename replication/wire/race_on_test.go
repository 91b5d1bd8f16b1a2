//go:build race

package wire

// raceAllocFactor: under the race detector, kmsg's decoders allocate each
// array twice (a temporary, then the copy appended to the message).
const raceAllocFactor = 2
