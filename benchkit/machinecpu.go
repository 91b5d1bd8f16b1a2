package benchkit

// machineCPU is the whole machine's CPU time so far, in clock ticks summed
// over every core: what every process on it used, not only this one.
type machineCPU struct {
	Total  uint64 // every state
	Idle   uint64 // nothing to run
	IOWait uint64 // idle with a disk request outstanding
}

// MachineLoad is how the machine's cores spent one measured window, as
// fractions of all cores' time (1 = every core for the whole window).
// Beside the process's own CPU it tells whether a figure was bound by CPU
// (busy near 1), by the disk (iowait high) or by waiting (both low).
type MachineLoad struct {
	Busy   float64 `json:"busy"`
	IOWait float64 `json:"iowait"`
}

// loadBetween is the share of the cores' time between two readings that
// was busy and that was waiting on the disk.
func loadBetween(a, b machineCPU) (MachineLoad, bool) {
	if b.Total <= a.Total || b.Idle < a.Idle || b.IOWait < a.IOWait {
		return MachineLoad{}, false
	}
	total := float64(b.Total - a.Total)
	idle := float64(b.Idle - a.Idle)
	iowait := float64(b.IOWait - a.IOWait)
	busy := total - idle - iowait
	if busy < 0 {
		busy = 0
	}
	return MachineLoad{Busy: busy / total, IOWait: iowait / total}, true
}
