package expr

import (
	"encoding/json"
	"testing"
)

// BenchmarkDecodeCanonical decodes a call's arguments and writes their
// canonical JSON, as validation does on every call.
func BenchmarkDecodeCanonical(b *testing.B) {
	raw := json.RawMessage(`{"order_id":"ORD-4471","amount":425000,"note":"refund <partial> \u00e9","lines":[{"sku":"A-1","qty":2}]}`)
	b.ReportAllocs()
	for b.Loop() {
		obj, err := DecodeObject(raw)
		if err != nil {
			b.Fatal(err)
		}
		_ = Canonical(obj)
	}
}
