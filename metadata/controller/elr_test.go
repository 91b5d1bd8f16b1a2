package controller

import (
	"slices"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// The orders are what Java 21's HashSet printed for the same inserts
// (new HashSet<>(elr), then each ISR member added), which is the order in
// which Kafka's controller writes an ELR and kafka-topics prints it.
func TestJavaHashSetOrder(t *testing.T) {
	for _, c := range []struct {
		elr, isr, want []int32
	}{
		{[]int32{102}, []int32{101}, []int32{101, 102}},
		{nil, []int32{112, 111, 101}, []int32{112, 101, 111}},
		{[]int32{131, 115}, []int32{99, 3, 19, 65536, 1}, []int32{65536, 1, 131, 115, 99, 3, 19}},
		{nil, []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 33, 49}, []int32{1, 33, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 49}},
		{[]int32{2000000, 1}, []int32{5, 70000}, []int32{1, 70000, 5, 2000000}},
	} {
		if got := javaHashSetOrder(len(c.elr), append(slices.Clone(c.elr), c.isr...)); !slices.Equal(got, c.want) {
			t.Errorf("elr %v then isr %v: %v, want %v", c.elr, c.isr, got, c.want)
		}
	}
}

// With the feature off, a partition that still has an ELR (the level was
// lowered) loses it at its next change, as maybeUpdateRecordElr clears it,
// and its ISR never empties.
func TestElrOffClearsAndKeepsTheLastIsrMember(t *testing.T) {
	p := &image.PartitionRegistration{Replicas: []int32{1, 2, 3}, Isr: []int32{1}, Elr: []int32{2}, LastKnownElr: []int32{3}, Leader: 1}
	v := versionsFor(record.MetadataVersion4_4IV2)
	c, _ := newChange(record.Uuid{1}, 0, p, nil, func(int32) bool { return false }, electionOnline, v).build()
	if c == nil || c.Isr != nil || c.Leader != record.NoLeader || c.EligibleLeaderReplicas == nil || len(c.EligibleLeaderReplicas) != 0 || c.LastKnownElr != nil {
		t.Fatalf("ELR off: %+v", c)
	}
	// On, the same fence empties the ISR into the ELR.
	b := newChange(record.Uuid{1}, 0, p, nil, func(int32) bool { return false }, electionOnline, v)
	b.elr, b.minIsr = true, 2
	c, _ = b.build()
	if c == nil || c.Isr == nil || len(c.Isr) != 0 || !slices.Equal(c.EligibleLeaderReplicas, []int32{1, 2}) {
		t.Fatalf("ELR on: %+v", c)
	}
}
