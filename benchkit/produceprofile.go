package benchkit

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// blockProfileRate samples one blocking event per this many nanoseconds
// blocked: fine enough to see the produce path's waits (a fetch parked
// in purgatory, a lock held across an fsync) without slowing it much.
const blockProfileRate = 10_000

// produceProfiles are the profiles `bench produce` writes of its cases:
// CPU to see what the engine spends, block and mutex to see where a
// produce waits (the process is not CPU-bound), and an execution trace to
// follow one produce across the goroutines that handle it.
type produceProfiles struct {
	cpu, trace     *os.File
	block, mutex   string
	blocking, muxd bool
}

// startProduceProfiles starts the profiles cfg names.
func startProduceProfiles(cfg ProduceConfig) (*produceProfiles, error) {
	p := &produceProfiles{block: cfg.BlockProfile, mutex: cfg.MutexProfile}
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		p.cpu = f
	}
	if cfg.TraceFile != "" {
		f, err := os.Create(cfg.TraceFile)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			p.stop()
			return nil, fmt.Errorf("trace: %w", err)
		}
		p.trace = f
	}
	if p.block != "" {
		runtime.SetBlockProfileRate(blockProfileRate)
		p.blocking = true
	}
	if p.mutex != "" {
		runtime.SetMutexProfileFraction(10)
		p.muxd = true
	}
	return p, nil
}

// stop ends the profiles and writes them.
func (p *produceProfiles) stop() error {
	var err error
	if p.cpu != nil {
		pprof.StopCPUProfile()
		err = p.cpu.Close()
	}
	if p.trace != nil {
		trace.Stop()
		err = errors.Join(err, p.trace.Close())
	}
	if p.blocking {
		err = errors.Join(err, writeProfile("block", p.block))
		runtime.SetBlockProfileRate(0)
	}
	if p.muxd {
		err = errors.Join(err, writeProfile("mutex", p.mutex))
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
