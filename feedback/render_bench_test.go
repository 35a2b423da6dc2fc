package feedback

import (
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkRender shortens a list answer too long for the observation.
func BenchmarkRender(b *testing.B) {
	data := json.RawMessage(`{"count":200,"items":[` + strings.Repeat(`{"id":"ORD-4471","qty":2,"tags":["a","b"]},`, 199) + `{"id":"last"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, om := Render(data, 2048); om == nil {
			b.Fatal("not shortened")
		}
	}
}
