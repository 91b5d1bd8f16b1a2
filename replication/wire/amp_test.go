package wire

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Amplification is what decoding costs in heap bytes per byte of body. kbin
// rejects an array count larger than the bytes left, but Go structs are far
// larger than their wire minimum, so a hostile frame packs as many minimal
// elements as it can. The probes below build, by reflection over kmsg's
// types, the densest bodies that kmsg will decode for each array in a
// request (or response), and measure what decoding them allocates:
//
//   - dense: the array holds as many zero-valued elements as fit;
//   - tagged: as dense, with one unknown tagged field on every element
//     (flexible versions), which costs kmsg a map per element;
//   - inflated: the array's count claims every byte left, the bytes behind
//     it are zeros; kmsg allocates the whole count before it decodes an
//     element;
//   - tags: the message's own tagged-field section holds as many unknown
//     tags as fit.

// ampProbe is one measured body.
type ampProbe struct {
	path  string
	kind  string
	body  int
	alloc uint64
}

func (p ampProbe) amp() float64 { return float64(p.alloc) / float64(p.body) }

func (p ampProbe) String() string {
	return fmt.Sprintf("%s %s: %d bytes decode into %d (%.1fx)", p.kind, p.path, p.body, p.alloc, p.amp())
}

// message is what kmsg requests and responses share for decoding.
type message interface {
	SetVersion(int16)
	AppendTo([]byte) []byte
	ReadFrom([]byte) error
	IsFlexible() bool
}

// slicePaths lists the paths (field indices) to every slice of structs or
// of non-byte values in t, up to depth levels deep.
func slicePaths(t reflect.Type, prefix []int, depth int) [][]int {
	var out [][]int
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Type.Kind() != reflect.Slice || f.Type.Elem().Kind() == reflect.Uint8 {
			continue
		}
		p := append(slices.Clone(prefix), i)
		out = append(out, p)
		if e := f.Type.Elem(); e.Kind() == reflect.Struct && depth > 1 {
			out = append(out, slicePaths(e, p, depth-1)...)
		}
	}
	return out
}

func pathName(t reflect.Type, path []int) string {
	name := t.Name()
	for _, i := range path {
		f := t.Field(i)
		name += "." + f.Name
		t = f.Type.Elem()
	}
	return name
}

// setTag gives the struct v (addressable) one unknown tagged field.
func setTag(v reflect.Value) {
	if f := v.FieldByName("UnknownTags"); f.IsValid() {
		f.Addr().Interface().(*kmsg.Tags).Set(9999, nil)
	}
}

// fill builds, in m, the path with one element at each level but the last,
// which gets n elements, each tagged if tagged is set.
func fill(m message, path []int, n int, tagged bool) {
	v := reflect.ValueOf(m).Elem()
	for i, fi := range path {
		f := v.Field(fi)
		count := 1
		if i == len(path)-1 {
			count = n
		}
		s := reflect.MakeSlice(f.Type(), count, count)
		if tagged && f.Type().Elem().Kind() == reflect.Struct {
			for j := range count {
				setTag(s.Index(j))
			}
		}
		f.Set(s)
		v = s.Index(0)
	}
}

// measureDecode reports the bytes allocated decoding body into a fresh
// message from mk at version.
func measureDecode(mk func() message, version int16, body []byte) uint64 {
	m := mk()
	m.SetVersion(version)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_ = m.ReadFrom(body) // a probe may not decode: it allocates anyway
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(m)
	return m1.TotalAlloc - m0.TotalAlloc
}

// probeAmplification measures every probe of mk's message at version with
// bodies of about target bytes and returns them, worst first.
func probeAmplification(mk func() message, version int16, target int) []ampProbe {
	var probes []ampProbe
	for _, b := range ampBodies(mk, version, target) {
		probes = append(probes, ampProbe{b.path, b.kind, len(b.body), measureDecode(mk, version, b.body)})
	}
	slices.SortFunc(probes, func(a, b ampProbe) int {
		switch {
		case a.amp() > b.amp():
			return -1
		case a.amp() < b.amp():
			return 1
		}
		return 0
	})
	return probes
}

// ampBody is one probe's body.
type ampBody struct {
	path, kind string
	body       []byte
}

// ampBodies returns the probes' bodies for mk's message at version, of
// about target bytes each. An inflated probe comes in every claim that
// kmsg's count check lets pass.
func ampBodies(mk func() message, version int16, target int) []ampBody {
	empty := mk()
	empty.SetVersion(version)
	t := reflect.TypeOf(empty).Elem()
	var bodies []ampBody
	encode := func(path []int, n int, tagged bool) []byte {
		m := mk()
		m.SetVersion(version)
		fill(m, path, n, tagged)
		return m.AppendTo(nil)
	}
	for _, path := range slicePaths(t, nil, 4) {
		name := pathName(t, path)
		for _, tagged := range []bool{false, true} {
			if tagged && !empty.IsFlexible() {
				continue
			}
			a, b := encode(path, 64, tagged), encode(path, 128, tagged)
			per := (len(b) - len(a)) / 64
			if per <= 0 {
				continue // not in this version
			}
			n := max(1, (target-len(a))/per)
			kind := "dense"
			if tagged {
				kind = "tagged"
			}
			bodies = append(bodies, ampBody{name, kind, encode(path, n, tagged)})
		}
		// Inflated: find the leaf count as the first byte where one
		// and two elements differ, and make it claim the rest.
		one, two := encode(path, 1, false), encode(path, 2, false)
		pos := 0
		for pos < len(one) && one[pos] == two[pos] {
			pos++
		}
		if pos == len(one) {
			continue
		}
		// kmsg checks a count against the bytes left times a minimum
		// element size: claim the most that passes.
		for k := 1; k <= 40; k++ {
			var head []byte
			if empty.IsFlexible() {
				head = appendUvarint(slices.Clone(one[:pos]), uint64((target-pos-5)/k)+1)
			} else {
				head = be.AppendUint32(slices.Clone(one[:pos-3]), uint32((target-pos)/k))
			}
			body := append(head, one[pos+1:]...)
			body = append(body, make([]byte, max(0, target-len(body)))...)
			bodies = append(bodies, ampBody{name, "inflated", body})
		}
	}
	if empty.IsFlexible() {
		// The message's own tags: as many as fit, two bytes each plus
		// the key's length.
		m := mk()
		m.SetVersion(version)
		tags := reflect.ValueOf(m).Elem().FieldByName("UnknownTags").Addr().Interface().(*kmsg.Tags)
		base := len(m.AppendTo(nil))
		for key := uint32(10000); base+int(key-10000)*4 < target; key++ {
			tags.Set(key, nil)
		}
		bodies = append(bodies, ampBody{"UnknownTags", "tags", m.AppendTo(nil)})
	}
	return bodies
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// servedAPIs are the APIs kraftlab's listeners serve or will soon.
var servedAPIs = []int16{0, 1, 3, 18, 52, 53, 54, 55, 59}

// TestPrintAmplification prints the worst probe of each served API, for
// the design notes: WIRE_AMP=1 go test -run PrintAmplification -v
func TestPrintAmplification(t *testing.T) {
	if os.Getenv("WIRE_AMP") == "" {
		t.Skip("set WIRE_AMP=1 to print the amplification table")
	}
	for _, key := range servedAPIs {
		req := kmsg.RequestForKey(key)
		worst := ampProbe{body: 1}
		wv := int16(0)
		for v := int16(0); v <= req.MaxVersion(); v++ {
			ps := probeAmplification(func() message { return kmsg.RequestForKey(key) }, v, 256<<10)
			if len(ps) > 0 && ps[0].amp() > worst.amp() {
				worst, wv = ps[0], v
			}
		}
		t.Logf("%-18s request worst v%d: %v", kmsg.NameForKey(key), wv, worst)
		byKind := map[string]ampProbe{}
		for v := int16(0); v <= req.MaxVersion(); v++ {
			for _, p := range probeAmplification(func() message { return kmsg.RequestForKey(key) }, v, 256<<10) {
				if w, ok := byKind[p.kind]; !ok || p.amp() > w.amp() {
					p.path = fmt.Sprintf("v%d %s", v, p.path)
					byKind[p.kind] = p
				}
			}
		}
		for k, p := range byKind {
			t.Logf("    %s: %v", k, p)
		}
		worst = ampProbe{body: 1}
		for v := int16(0); v <= req.MaxVersion(); v++ {
			ps := probeAmplification(func() message { return kmsg.ResponseForKey(key) }, v, 256<<10)
			if len(ps) > 0 && ps[0].amp() > worst.amp() {
				worst, wv = ps[0], v
			}
		}
		t.Logf("%-18s response worst v%d: %v", kmsg.NameForKey(key), wv, worst)
	}
}
