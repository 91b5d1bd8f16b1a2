package benchkit

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// blockProfileRate samples one blocking event per this many nanoseconds
// blocked: fine enough to see a commit's or a produce's waits (a fetch
// parked in purgatory, a lock held across an fsync) without slowing it
// much.
const blockProfileRate = 10_000

// allocProfileRate samples one allocation per this many bytes allocated,
// finer than Go's default (512 KiB), so the small allocations a commit
// makes show with their counts.
const allocProfileRate = 4 << 10

// Profiles names the files a benchmark writes Go's profiles of its cases
// to; an empty name writes none. CPU shows what the engine spends, Alloc
// what it allocates (go tool pprof -sample_index=alloc_objects), Block
// and Mutex where it waits when it is not CPU-bound, and Trace follows
// one commit or produce across the goroutines that handle it (go tool
// trace).
type Profiles struct {
	CPU, Alloc, Block, Mutex, Trace string
}

// RegisterProfileFlags defines --cpuprofile, --allocprofile,
// --blockprofile, --mutexprofile and --trace on fs; what names the part
// of the run they cover.
func RegisterProfileFlags(fs *flag.FlagSet, p *Profiles, what string) {
	fs.StringVar(&p.CPU, "cpuprofile", "", "write a CPU profile of "+what+" to this file")
	fs.StringVar(&p.Alloc, "allocprofile", "", "write an allocation profile of "+what+" to this file")
	fs.StringVar(&p.Block, "blockprofile", "", "write a block profile (where goroutines wait) of "+what+" to this file")
	fs.StringVar(&p.Mutex, "mutexprofile", "", "write a mutex contention profile of "+what+" to this file")
	fs.StringVar(&p.Trace, "trace", "", "write an execution trace of "+what+" to this file (go tool trace)")
}

// runningProfiles are the profiles a run started.
type runningProfiles struct {
	names     Profiles
	cpu, tr   *os.File
	allocRate int
}

// start starts the profiles p names.
func (p Profiles) start() (*runningProfiles, error) {
	r := &runningProfiles{names: p}
	if p.CPU != "" {
		f, err := os.Create(p.CPU)
		if err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		r.cpu = f
	}
	if p.Trace != "" {
		f, err := os.Create(p.Trace)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			r.stop()
			return nil, fmt.Errorf("trace: %w", err)
		}
		r.tr = f
	}
	if p.Alloc != "" {
		r.allocRate = runtime.MemProfileRate
		runtime.MemProfileRate = allocProfileRate
	}
	if p.Block != "" {
		runtime.SetBlockProfileRate(blockProfileRate)
	}
	if p.Mutex != "" {
		runtime.SetMutexProfileFraction(10)
	}
	return r, nil
}

// stop ends the profiles and writes them.
func (r *runningProfiles) stop() error {
	var err error
	if r.cpu != nil {
		pprof.StopCPUProfile()
		err = r.cpu.Close()
	}
	if r.tr != nil {
		trace.Stop()
		err = errors.Join(err, r.tr.Close())
	}
	if r.names.Alloc != "" {
		runtime.GC() // the profile is as of the last GC
		err = errors.Join(err, writeProfile("allocs", r.names.Alloc))
		runtime.MemProfileRate = r.allocRate
	}
	if r.names.Block != "" {
		err = errors.Join(err, writeProfile("block", r.names.Block))
		runtime.SetBlockProfileRate(0)
	}
	if r.names.Mutex != "" {
		err = errors.Join(err, writeProfile("mutex", r.names.Mutex))
		runtime.SetMutexProfileFraction(0)
	}
	return err
}

func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%s profile: %w", name, err)
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("%s profile: %w", name, err)
	}
	return f.Close()
}
