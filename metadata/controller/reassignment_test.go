package controller

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
)

// reassignmentTo splits a move as Kafka's PartitionReassignmentReplicas:
// removing and adding in id order, the replicas the target then those
// leaving.
func TestReassignmentToSplitsAMove(t *testing.T) {
	for _, c := range []struct {
		from, to                   []int32
		replicas, removing, adding []int32
	}{
		{[]int32{3, 2, 1}, []int32{3, 2, 1}, []int32{3, 2, 1}, nil, nil},
		{[]int32{3, 2, 1}, []int32{3, 6, 2, 1, 5}, []int32{3, 6, 2, 1, 5}, nil, []int32{5, 6}},
		{[]int32{3, 2, 1, 0}, []int32{3, 1}, []int32{3, 1, 0, 2}, []int32{0, 2}, nil},
		{[]int32{3, 2, 1, 0}, []int32{7, 3, 1, 9}, []int32{7, 3, 1, 9, 0, 2}, []int32{0, 2}, []int32{7, 9}},
		{[]int32{3, 2, 1, 0}, []int32{0, 1, 3, 2}, []int32{0, 1, 3, 2}, nil, nil},
	} {
		a := reassignmentTo(c.from, c.to)
		if !slices.Equal(a.replicas, c.replicas) || !slices.Equal(a.removing, orNone(c.removing)) || !slices.Equal(a.adding, orNone(c.adding)) {
			t.Errorf("%v -> %v: replicas %v removing %v adding %v, want %v %v %v", c.from, c.to, a.replicas, a.removing, a.adding, c.replicas, c.removing, c.adding)
		}
	}
}

// complete finishes a move only once every adding replica is in the ISR,
// and one that shrinks the partition only once every target replica is;
// the removing replicas leave the replicas and the ISR.
func TestCompleteWaitsForTheAddingReplicas(t *testing.T) {
	for _, c := range []struct {
		from, to, isr    []int32
		done             bool
		replicas, newIsr []int32
	}{
		{[]int32{0, 1, 2}, []int32{3, 4, 5}, []int32{0, 1, 2, 3, 4}, false, nil, nil},
		{[]int32{0, 1, 2}, []int32{3, 4, 5}, []int32{0, 1, 2, 3, 4, 5}, true, []int32{3, 4, 5}, []int32{3, 4, 5}},
		{[]int32{0, 1, 2}, []int32{0, 1, 3}, []int32{0, 1, 2, 3}, true, []int32{0, 1, 3}, []int32{0, 1, 3}},
		// A target replica already there need not be in sync.
		{[]int32{0, 1, 2}, []int32{0, 1, 3}, []int32{0, 2, 3}, true, []int32{0, 1, 3}, []int32{0, 3}},
		{[]int32{0, 1, 2}, []int32{0, 1, 3}, []int32{2, 3}, true, []int32{0, 1, 3}, []int32{3}},
		{[]int32{0, 1, 2}, []int32{0, 1, 3}, []int32{0, 1, 2}, false, nil, nil},
		{[]int32{0, 1, 2, 3}, []int32{1, 2, 3, 4, 5}, []int32{0, 1, 2, 4, 5}, true, []int32{1, 2, 3, 4, 5}, []int32{1, 2, 4, 5}},
		// Fewer replicas: every target one must be in sync, or the ISR
		// would shrink for nothing.
		{[]int32{0, 1, 2, 3, 4}, []int32{2, 3, 4, 5}, []int32{0, 1, 5}, false, nil, nil},
		{[]int32{0, 1, 2, 3, 4}, []int32{2, 3, 4, 5}, []int32{0, 1, 2, 3, 4, 5}, true, []int32{2, 3, 4, 5}, []int32{2, 3, 4, 5}},
		// No ISR would be left.
		{[]int32{0, 1}, []int32{2}, []int32{0}, false, nil, nil},
	} {
		a := reassignmentTo(c.from, c.to)
		got, isr := a.complete(c.isr)
		name := fmt.Sprintf("%v -> %v with isr %v", c.from, c.to, c.isr)
		if got.inProgress() == c.done {
			t.Errorf("%s: completed %v, want %v", name, !got.inProgress(), c.done)
			continue
		}
		if !c.done {
			if !slices.Equal(got.replicas, a.replicas) || !slices.Equal(isr, c.isr) {
				t.Errorf("%s: not completed but changed to %v isr %v", name, got.replicas, isr)
			}
			continue
		}
		if !slices.Equal(got.replicas, c.replicas) || !slices.Equal(isr, c.newIsr) {
			t.Errorf("%s: replicas %v isr %v, want %v %v", name, got.replicas, isr, c.replicas, c.newIsr)
		}
	}
}

// revert takes the adding replicas out (Kafka's
// PartitionReassignmentRevert); an ISR of adding replicas only becomes the
// first original replica, an unclean election.
func TestRevertKeepsTheOriginalReplicas(t *testing.T) {
	p := &image.PartitionRegistration{Replicas: []int32{3, 4, 5, 0, 1, 2}, AddingReplicas: []int32{3, 4, 5}, RemovingReplicas: []int32{0, 1, 2}, Isr: []int32{0, 2, 3}}
	to, isr, unclean, ok := revert(p)
	if !ok || unclean || !slices.Equal(to.replicas, []int32{0, 1, 2}) || !slices.Equal(isr, []int32{0, 2}) || to.inProgress() {
		t.Errorf("revert: %v isr %v unclean %v ok %v", to.replicas, isr, unclean, ok)
	}
	p.Isr = []int32{4, 3}
	to, isr, unclean, ok = revert(p)
	if !ok || !unclean || !slices.Equal(to.replicas, []int32{0, 1, 2}) || !slices.Equal(isr, []int32{0}) {
		t.Errorf("revert of an ISR of adding replicas: %v isr %v unclean %v ok %v", to.replicas, isr, unclean, ok)
	}
	if _, _, _, ok := revert(&image.PartitionRegistration{Replicas: []int32{3}, AddingReplicas: []int32{3}, Isr: []int32{3}}); ok {
		t.Error("revert of a partition whose replicas were all added: ok")
	}
}
