package pipeline

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/validate"
)

// The operation key of a tool without a key template is "op:", the tool's
// name and jsontext.Hash of (run, tool, canonical args), byte for byte: keys
// are stored in the ledger, so a key derived differently after an upgrade
// would let a repeat of a done write run again.
func TestOperationKeyIsTheStoredDerivation(t *testing.T) {
	for _, tc := range []struct{ name, run, tool, canonical string }{
		{"short", "run_1", "issue_refund", `{"amount":5}`},
		{"empty args", "run_1", "t", ``},
		{"past the stack buffers", strings.Repeat("r", 300), strings.Repeat("t", 200), `{"s":"` + strings.Repeat("x", 400) + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &validate.Checked{Tool: &validate.Compiled{Name: tc.tool}, Canonical: []byte(tc.canonical)}
			id := tc.run + "\x00" + tc.tool + "\x00" + tc.canonical
			want := "op:" + tc.tool + ":" + jsontext.Hash([]byte(id))
			if got := operationKey(c, tc.run); got != want {
				t.Fatalf("operationKey = %s, want %s", got, want)
			}
		})
	}
}
