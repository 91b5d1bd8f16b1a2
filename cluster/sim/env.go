package sim

import (
	"math/rand/v2"
	"time"

	"github.com/kraftlab/kraftlab/metadata/metasim"
)

// env lends metasim's clock, queue, random source, trace and network to
// the data plane.
type env struct {
	ms   *metasim.Sim
	msgs uint64
}

func (e *env) Now() time.Time   { return e.ms.Cluster().Now() }
func (e *env) Rand() *rand.Rand { return e.ms.Cluster().Rand() }

// After drops the event's name: raftsim's trace hashes every event by
// its place in the queue, not its name.
func (e *env) After(d time.Duration, _ string, fn func()) { e.ms.Cluster().After(d, fn) }

func (e *env) Record(line string) { e.ms.Record(line) }
func (e *env) Fail(err error)     { e.ms.Cluster().Fail(err) }

func (e *env) Send(from, to int32, _ string, deliver func()) {
	e.msgs++
	e.ms.Cluster().Send(from, to, e.msgs, deliver)
}
