package transcript

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
)

func TestArguments(t *testing.T) {
	input := "cmd 101 102 flag n=7 d=1.5s ids=(1, 2,3) none=() f=(epoch=4 end=70) s=(a,b)\n----\nok\n"
	datadriven.RunTestFromString(t, input, func(t *testing.T, d *datadriven.TestData) string {
		c := &Cmd{T: t, D: d, used: make([]bool, len(d.CmdArgs))}
		if !c.Has("flag") || c.Has("missing") {
			t.Error("Has")
		}
		if n := c.Int("n", 0); n != 7 {
			t.Errorf("Int %d", n)
		}
		if n := c.Int32("absent", 3); n != 3 {
			t.Errorf("Int32 default %d", n)
		}
		if v := c.Dur("d", 0); v != 1500*time.Millisecond {
			t.Errorf("Dur %v", v)
		}
		if ids, ok := c.IDs("ids"); !ok || !slices.Equal(ids, []int32{1, 2, 3}) {
			t.Errorf("IDs %v %v", ids, ok)
		}
		if ids, ok := c.IDs("none"); !ok || ids == nil || len(ids) != 0 {
			t.Errorf("IDs of () %v %v", ids, ok)
		}
		if f, ok := c.Fields("f"); !ok || f["epoch"] != "4" || f["end"] != "70" || len(f) != 2 {
			t.Errorf("Fields %v %v", f, ok)
		}
		if s, ok := c.Strs("s"); !ok || !slices.Equal(s, []string{"a", "b"}) {
			t.Errorf("Strs %v %v", s, ok)
		}
		if w := c.Words(); !slices.Equal(w, []string{"101", "102"}) {
			t.Errorf("Words %v", w)
		}
		for i, u := range c.used {
			if !u {
				t.Errorf("argument %s not marked used", d.CmdArgs[i].Key)
			}
		}
		return "ok"
	})
}

func TestParseFieldsRefusesBareWords(t *testing.T) {
	if _, err := ParseFields([]string{"epoch=1 end"}); err == nil {
		t.Fatal("a field without a value was accepted")
	}
	if _, err := ParseIDs([]string{"1", "x"}); err == nil {
		t.Fatal("a non-number id was accepted")
	}
}

func TestPrinting(t *testing.T) {
	for code, want := range map[int16]string{
		0:                               "NONE",
		kerr.NotLeaderForPartition.Code: "NOT_LEADER_OR_FOLLOWER",
		kerr.IneligibleReplica.Code:     "INELIGIBLE_REPLICA",
		-2:                              "code -2",
		9999:                            "code 9999",
	} {
		if got := Code(code); got != want {
			t.Errorf("Code(%d) = %q, want %q", code, got, want)
		}
	}
	wrapped := fmt.Errorf("partition t-0: ISR [1] is smaller than 2: %w", kerr.NotEnoughReplicas)
	for err, want := range map[error]string{
		nil:                    "error=NONE",
		kerr.FencedLeaderEpoch: "error=FENCED_LEADER_EPOCH",
		wrapped:                `error=NOT_ENOUGH_REPLICAS "partition t-0: ISR [1] is smaller than 2"`,
		errors.New("disk"):     `error=UNKNOWN_SERVER_ERROR "disk"`,
	} {
		if got := Err(err); got != want {
			t.Errorf("Err(%v) = %q, want %q", err, got, want)
		}
	}
	if got := IDs(nil); got != "()" {
		t.Errorf("IDs(nil) = %q", got)
	}
	if got := IDs([]int32{3, 1}); got != "(3,1)" {
		t.Errorf("IDs = %q", got)
	}
	var l Lines
	if l.String() != "" {
		t.Error("empty lines print something")
	}
	l.Addf("a=%d", 1)
	l.Addf("b")
	if l.String() != "a=1\nb\n" {
		t.Errorf("Lines %q", l.String())
	}
}

func TestClockNeverGoesBack(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	c := NewClock(start)
	c.Advance(1125 * time.Millisecond)
	c.Set(start)
	if c.Elapsed() != 1125*time.Millisecond || c.At(c.Now()) != "+1.125s" {
		t.Fatalf("elapsed %v, at %s", c.Elapsed(), c.At(c.Now()))
	}
}
