module github.com/kraftlab/kraftlab/bench

go 1.26.0

replace github.com/kraftlab/kraftlab => ../

replace github.com/hashicorp/go-metrics => github.com/hashicorp/go-metrics v0.6.1

require (
	github.com/hashicorp/go-hclog v1.6.3
	github.com/hashicorp/raft v1.8.0
	github.com/hashicorp/raft-boltdb/v2 v2.3.1
	github.com/kraftlab/kraftlab v0.0.0-00010101000000-000000000000
	go.etcd.io/raft/v3 v3.7.0
	go.uber.org/goleak v1.3.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/twmb/franz-go v1.22.3 // indirect
	github.com/twmb/franz-go/pkg/kmsg v1.15.1 // indirect
	golang.org/x/sys v0.47.0 // indirect
)

require (
	github.com/armon/go-metrics v0.4.1 // indirect
	github.com/boltdb/bolt v1.3.1 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/fatih/color v1.13.0 // indirect
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b // indirect
	github.com/hashicorp/go-immutable-radix v1.3.1 // indirect
	github.com/hashicorp/go-metrics v0.7.0 // indirect
	github.com/hashicorp/go-msgpack/v2 v2.1.5 // indirect
	github.com/hashicorp/golang-lru v1.0.2 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	go.etcd.io/bbolt v1.3.5 // indirect
)
