package pipeline

import (
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/types"
	"github.com/toolgate/toolgate/validate"
)

// admissionFor is the one place that decides how a call takes its step:
// every combination of the tool's effect and limits, a refusal and a
// settlement (Reconcile) gives the admission the store's writes rely on.
func TestAdmissionFor(t *testing.T) {
	const key = "op:t:1"
	for _, tc := range []struct {
		name        string
		effect      types.Effect
		limitedTool bool
		refused     bool
		expectKey   string
		want        admission
	}{
		{"a read takes its step in its commit", types.EffectRead, false, false, "", stepInCommit},
		{"a refusal takes its step in its commit", types.EffectWrite, false, true, "", stepInCommit},
		{"a write begins with its step", types.EffectWrite, false, false, "", stepWithBegin},
		{"a limited write is admitted by the limiter", types.EffectWrite, true, false, "", limited},
		{"a limited read is admitted by the limiter", types.EffectRead, true, false, "", limited},
		{"a refused limited call takes its step in its commit", types.EffectWrite, true, true, "", stepInCommit},
		{"a settlement begins with its step", types.EffectWrite, true, false, key, stepWithBegin},
		{"a settlement under another key takes its step first", types.EffectWrite, false, false, "op:other", stepFirst},
		{"a refused settlement takes its step first", types.EffectWrite, false, true, key, stepFirst},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Pipeline{store: memory.New()}
			spec := &config.Tool{Name: "t", Effect: tc.effect}
			c := &validate.Compiled{Name: "t", Spec: spec, StateWriter: tc.limitedTool}
			f := &flight{expectKey: tc.expectKey, key: key}
			if !tc.refused {
				f.checked, f.spec = &validate.Checked{Tool: c}, spec
			}
			if got := p.admissionFor(f, tc.refused); got != tc.want {
				t.Fatalf("admission %d, want %d", got, tc.want)
			}
		})
	}
}
