package benchkit

import "testing"

func TestParseProcStatReadsTheAggregateLine(t *testing.T) {
	stat := "cpu  100 5 50 800 40 3 2 1 7 0\ncpu0 50 2 25 400 20 1 1 0 3 0\nintr 1\n"
	m, err := parseProcStat([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	// Guest (7) is already inside user: not added again.
	if m.Total != 100+5+50+800+40+3+2+1 || m.Idle != 800 || m.IOWait != 40 {
		t.Fatalf("parsed %+v", m)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5\n", "cpu 1 2 x 4 5\n", "cpu 1 2\n"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("parseProcStat(%q) accepted", bad)
		}
	}
}

func TestMachineTicksReadsThisMachine(t *testing.T) {
	m, ok := machineTicks()
	if !ok || m.Total == 0 || m.Idle > m.Total {
		t.Fatalf("machineTicks = %+v, %v", m, ok)
	}
}
