package server

import (
	"testing"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/kraftlab/kraftlab/storage/disktest"
)

// The partition logs are written through the node's disk, the one under
// its metadata log: a full one refuses a produce, and the node's slow disk
// (kraftlab disk) slows its partitions too.
func TestPartitionLogsWriteThroughTheNodesDisk(t *testing.T) {
	disk := disktest.New()
	rm := replicaRigOn(t, storage.FlushNever, dataLimits{}, disk)
	if rp := syncProduce(t, rm, produceReq(13, 1, "", ledID, 0, batch("a"))); rp.ErrorCode != 0 {
		t.Fatalf("produce on a disk with room: %+v", rp)
	}
	disk.Fill()
	if rp := syncProduce(t, rm, produceReq(13, 1, "", ledID, 0, batch("b"))); rp.ErrorCode == 0 {
		t.Fatalf("produce on a full disk answered %+v", rp)
	}
	if disk.Refused() == 0 {
		t.Error("the full disk refused no write: the partition log wrote around it")
	}
}
