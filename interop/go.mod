module github.com/kraftlab/kraftlab/interop

go 1.26.0

replace github.com/kraftlab/kraftlab => ../

require (
	github.com/kraftlab/kraftlab v0.0.0-00010101000000-000000000000
	github.com/twmb/franz-go v1.22.3
	github.com/twmb/franz-go/pkg/kmsg v1.15.1
)

require (
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/go-zookeeper/zk v1.0.4 // indirect
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/magiconair/properties v1.8.10 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/twmb/franz-go/pkg/kadm v1.20.0 // indirect
	golang.org/x/sys v0.38.0 // indirect
)
