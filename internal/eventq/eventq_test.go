package eventq

import (
	"testing"
	"time"
)

// Events come out by due time, and in scheduling order at the same time.
func TestOrder(t *testing.T) {
	var q Queue[string]
	t0 := time.Unix(100, 0)
	q.Push(t0.Add(2*time.Second), "late")
	q.Push(t0, "first")
	q.Push(t0.Add(time.Second), "b1")
	q.Push(t0, "second")
	q.Push(t0.Add(time.Second), "b2")
	if at, ok := q.Next(); !ok || !at.Equal(t0) {
		t.Fatalf("next %v %v, want %v", at, ok, t0)
	}
	var got []string
	for q.Len() > 0 {
		_, v := q.Pop()
		got = append(got, v)
	}
	want := []string{"first", "second", "b1", "b2", "late"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
	if _, ok := q.Next(); ok {
		t.Fatal("an empty queue has a next event")
	}
}
