package interop

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestBannerReaderFollowsWrappedItems(t *testing.T) {
	banner := `kraftlab playground "default" is up: 5 controllers, 5 brokers, profile workshop
  controllers  1=127.0.0.1:37031  2=127.0.0.1:36059  3=127.0.0.1:33237
               4=127.0.0.1:37797  5=127.0.0.1:32975
  brokers      101=127.0.0.1:41951  102=127.0.0.1:41685  103=127.0.0.1:41355
               104=127.0.0.1:42601  105=127.0.0.1:44737
  bootstrap    127.0.0.1:41951,127.0.0.1:41685,127.0.0.1:41355
  kcat         kcat -b 127.0.0.1:41951 -L
In another shell:
  kraftlab status`
	var b bannerReader
	for _, line := range strings.Split(banner, "\n") {
		b.add(line)
	}
	wantC := map[int32]string{1: "127.0.0.1:37031", 2: "127.0.0.1:36059", 3: "127.0.0.1:33237", 4: "127.0.0.1:37797", 5: "127.0.0.1:32975"}
	if got := b.controllers(); !maps.Equal(got, wantC) {
		t.Errorf("controllers = %v, want %v", got, wantC)
	}
	wantB := []string{"127.0.0.1:41951", "127.0.0.1:41685", "127.0.0.1:41355", "127.0.0.1:42601", "127.0.0.1:44737"}
	if got := b.brokers(); !slices.Equal(got, wantB) {
		t.Errorf("brokers = %v, want %v", got, wantB)
	}
}
