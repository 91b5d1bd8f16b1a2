package main

import "github.com/kraftlab/kraftlab/benchkit"

// registry lists the systems this binary can run, in the order they appear
// in the report: kraftlab's first, so that kraftlab is the reference of
// every ratio column, then the peers. kraftlab-push, optional in the
// kraftlab binary, runs by default here: push Raft on kraftlab's engine
// beside the two push peers separates the design from the implementations.
func registry() []benchkit.Factory {
	fs := benchkit.KraftlabFactories()
	for i := range fs {
		if fs[i].Name == "kraftlab-push" {
			fs[i].Optional = false
		}
	}
	return append(fs,
		benchkit.Factory{
			Name:  "hashicorp",
			New:   func() benchkit.System { return &hashicorpSystem{} },
			About: "hashicorp/raft v1.8.0, TCP transport, default config; InmemStore, raft-boltdb/v2 v2.3.1 for flush always",
		},
		benchkit.Factory{
			Name:  "etcd",
			New:   func() benchkit.System { return &etcdSystem{} },
			About: "go.etcd.io/raft/v3 v3.7.0, MemoryStorage, this module's TCP transport; plus its WAL (fdatasync per Ready) for flush always",
		},
	)
}
