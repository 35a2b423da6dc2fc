package feedback

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/types"
)

func TestRenderShortensLists(t *testing.T) {
	tests := []struct {
		name, data string
		max        int
		want       string
		omitted    *types.Omitted
	}{
		{"fits", `[1,2,3]`, 64, `[1,2,3]`, nil},
		{"a list", `[` + strings.Repeat(`"abcdefghij",`, 9) + `"abcdefghij"]`, 64, `["abcdefghij","abcdefghij","abcdefghij","abcdefghij"]`, &types.Omitted{Shown: 4, Total: 10}},
		{"items holding brackets, commas and quotes", `[` + strings.Repeat(`{"a":"],\"[,","b":[1,{"c":"}"}]},`, 4) + `{}]`, 70,
			`[{"a":"],\"[,","b":[1,{"c":"}"}]},{"a":"],\"[,","b":[1,{"c":"}"}]}]`, &types.Omitted{Shown: 2, Total: 5}},
		{"the longest list field", `{"count":12,"items":[` + strings.Repeat(`"xxxxxxxxxx",`, 11) + `"xxxxxxxxxx"],"tags":["a","b"]}`, 80,
			`{"count":12,"items":["xxxxxxxxxx","xxxxxxxxxx","xxxxxxxxxx"],"tags":["a","b"]}`, &types.Omitted{Shown: 3, Total: 12, Field: "items"}},
		{"spaces compacted first", "[ 1, 2, 3 ]", 64, `[1,2,3]`, nil},
		{"no list: cut", `{"text":"` + strings.Repeat("y", 100) + `"}`, 64, `{"text":"` + strings.Repeat("y", 55) + "…", &types.Omitted{ShownBytes: 64, TotalBytes: 111}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, om := Render(json.RawMessage(tt.data), tt.max)
			if got != tt.want {
				t.Fatalf("Render = %s, want %s", got, tt.want)
			}
			if (om == nil) != (tt.omitted == nil) || om != nil && *om != *tt.omitted {
				t.Fatalf("omitted = %+v, want %+v", om, tt.omitted)
			}
			if om != nil && om.Total > 0 && !json.Valid([]byte(got)) {
				t.Fatalf("a shortened list is not JSON: %s", got)
			}
		})
	}
}

// A huge answer of small items is shown without decoding it: the memory
// Render allocates is a small multiple of the answer, not the many-fold
// blow-up of decoding every item.
func TestRenderHugeListAllocatesLittle(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"values":[`)
	for i := range 3_000_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("7")
	}
	b.WriteString(`]}`)
	data := json.RawMessage(b.Bytes())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	text, om := Render(data, 4096)
	runtime.ReadMemStats(&after)
	if om == nil || om.Total != 3_000_000 || om.Field != "values" || len(text) > 4096 {
		t.Fatalf("omitted %+v, %d bytes shown", om, len(text))
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > uint64(len(data)) {
		t.Fatalf("Render allocated %d bytes for a %d-byte answer", allocated, len(data))
	}
}

// TestRenderInvalidDataIsCut: data that is not JSON is not walked as a
// list (the scanner refuses it where the old lenient walk guessed at its
// items); it is shown raw and cut, and the cut is said.
func TestRenderInvalidDataIsCut(t *testing.T) {
	data := json.RawMessage(`[` + strings.Repeat(`abc,`, 30) + `abc]`)
	got, om := Render(data, 64)
	if want := string(data[:64]) + "…"; got != want {
		t.Fatalf("Render = %s, want %s", got, want)
	}
	if om == nil || *om != (types.Omitted{ShownBytes: 64, TotalBytes: len(data)}) {
		t.Fatalf("omitted = %+v", om)
	}
}
