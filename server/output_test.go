package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// An answer that breaks the tool's output_schema is a clear failure, not
// ok: true with data of the wrong shape.
func TestAnswerNotMatchingOutputSchema(t *testing.T) {
	b := setup(t, setupOpts{config: func(cfg *config.Config) {
		cfg.Tools["echo"].OutputSchema = map[string]any{"type": "object", "required": []any{"n"},
			"properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": 100}}}
	}})
	run := b.startRun(alphaKey, `{"principal":{"id":"cust_42"}}`)
	for _, tc := range []struct {
		name, args string
		ok         bool
		want       string // in the observation
	}{
		{"conforms", `{"n":7}`, true, ""},
		{"missing field", `{"s":"x"}`, false, "missing property 'n'"},
		{"out of range", `{"n":101}`, false, "at /n: maximum: got 101, want 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := b.post("/v1/runs/"+run+"/calls", alphaKey, `{"tool":"echo","args":`+tc.args+`}`)
			res := resp.envelope(t)
			if resp.status != http.StatusOK || res.OK != tc.ok {
				t.Fatalf("%d ok %v, want 200 ok %v: %s", resp.status, res.OK, tc.ok, resp.body)
			}
			if tc.ok {
				return
			}
			if res.Code() != types.CodeInvalidOutput || string(res.Data) != "null" || res.Error.Retryable ||
				res.Meta.SideEffect != types.SideEffectNone || res.Meta.Next != types.NextEscalate {
				t.Errorf("envelope %s, want invalid_output, data null, not retryable, side_effect none (a read), next escalate", resp.body)
			}
			if !strings.Contains(res.Observation, tc.want) || !strings.Contains(res.Observation, "Answer as received: ") {
				t.Errorf("observation %q lacks the schema error %q and the answer", res.Observation, tc.want)
			}
		})
	}
}
