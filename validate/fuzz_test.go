package validate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/jsontext"
)

// FuzzCheck feeds arbitrary bytes as the arguments of every tool: Check
// must never panic, must return exactly one of its results, and an accepted
// call's canonical form must be stable.
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{
		`{"order_id":"ORD-4471","amount_paise":425000}`,
		`{"order_id":"ORD-1","amount_paise":9007199254740993,"reason":"goodwill"}`,
		`{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[{"sku":"A","qty":2}],"note":null,"weight_kg":1.5}`,
		`{"amount_paise":1e999999}`,
		`[1,2]`, `null`, ``, `{"a":`, `{"order_id":"\u0000\ud800"}`,
	} {
		f.Add([]byte(seed))
	}
	v := setup(f)
	state := json.RawMessage(`{"goodwill_refunds":0}`)
	f.Fuzz(func(t *testing.T, args []byte) {
		for _, tool := range v.Names() {
			c, r := v.Check(&Input{Tool: tool, Args: args, Principal: alice, State: state, RunID: "r1", CallID: "c1"})
			if r == nil && c == nil || r != nil && c != nil && r.Rule < 0 {
				t.Fatalf("%s: Check returned checked=%v refusal=%v", tool, c != nil, r != nil)
			}
			if r != nil {
				if r.Code == "" || r.Message == "" || strings.Contains(r.Message, "\n") {
					t.Fatalf("%s: bad refusal %+v", tool, r)
				}
				if r.Rule < -1 || r.Rule >= len(v.tools[tool].Rules) {
					t.Fatalf("%s: rule index %d out of range", tool, r.Rule)
				}
				continue
			}
			again, err := jsontext.DecodeObject(c.Canonical)
			if err != nil {
				t.Fatalf("%s: canonical %s does not decode: %v", tool, c.Canonical, err)
			}
			if !bytes.Equal(jsontext.Canonical(again), c.Canonical) {
				t.Fatalf("%s: canonical form not stable: %s", tool, c.Canonical)
			}
			if c.ArgsHash != jsontext.Hash(c.Canonical) {
				t.Fatalf("%s: ArgsHash does not match Canonical", tool)
			}
		}
	})
}
