module github.com/kraftlab/kraftlab/interop

go 1.26.0

replace github.com/kraftlab/kraftlab => ../

require (
	github.com/kraftlab/kraftlab v0.0.0-00010101000000-000000000000
	github.com/twmb/franz-go/pkg/kmsg v1.15.1
)
