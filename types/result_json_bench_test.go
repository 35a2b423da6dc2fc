package types

import (
	"encoding/json"
	"testing"
)

// BenchmarkAppendJSON encodes a typical success envelope both ways the
// pipeline does (HTML escaped for the row, not for the answer).
func BenchmarkAppendJSON(b *testing.B) {
	r := &Result{OK: true, Data: json.RawMessage(`{"id":"ORD-4471","items":[{"sku":"A-1","qty":2}],"paid":true}`),
		Observation: `get_order succeeded (1 attempt, 3 ms). Result: {"id":"ORD-4471","items":[{"sku":"A-1","qty":2}],"paid":true}`,
		Meta: Meta{RunID: "run_01J9ZK3", Step: 3, Tool: "get_order", CallID: "c1", Attempts: 1, ElapsedMS: 3,
			Next: NextContinue, SideEffect: SideEffectNone}}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = r.AppendJSON(buf[:0], true); err != nil {
			b.Fatal(err)
		}
		if buf, err = r.AppendJSON(buf[:0], false); err != nil {
			b.Fatal(err)
		}
	}
}
