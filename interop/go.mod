module github.com/kraftlab/kraftlab/interop

go 1.26.0

replace github.com/kraftlab/kraftlab => ../

require github.com/twmb/franz-go/pkg/kmsg v1.15.1
