package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/toolgate/toolgate/types"
)

// checkResent is the check of a write that was sent again under its
// honoured operation key after an attempt that may have acted: before its
// answer is reported committed, the tool's verify read (when it has one)
// must show the same effect. A provider that claims to honour the key but
// made a second refund answers the re-send with the second one, while the
// read shows the first: the call stays ok (the write was done), but the
// model is told it may have been done twice and to escalate (f.doubt), and
// the log says so at warn level.
//
// A read that cannot be made changes nothing: the answer stands, as it did
// before this check, and the log says why it could not be checked.
func (p *Pipeline) checkResent(ctx context.Context, f *flight, answer json.RawMessage) {
	if f.spec.Effect != types.EffectWrite || !f.keyHonoured() || f.spec.Verify == nil {
		return
	}
	found, read, why := p.verify(ctx, f)
	lookup := f.spec.Verify.Lookup
	switch {
	case why != "":
		p.log.Warn("a re-sent write could not be checked with its verify read", "tool", f.spec.Name, "run", f.run.ID,
			"key", f.key, "dependency", f.spec.Dependency, "why", why)
		return
	case !found:
		f.doubt = fmt.Sprintf("But a check with %s does not show it, although %s answered that it was done after the request was sent again.",
			lookup, orName(f.spec.Dependency, f.spec.Name))
	case !sameEffect(answer, read):
		shown := "another result"
		if len(read) <= 300 {
			shown = string(read)
		}
		f.doubt = fmt.Sprintf("But a check with %s shows %s, not this answer: %s may have carried it out more than once although every attempt carried the same %s, so it may have been done twice.",
			lookup, shown, orName(f.spec.Dependency, f.spec.Name), f.spec.Idempotency.Header)
	default:
		return
	}
	p.log.Warn("a re-sent write's answer differs from its verify read: the dependency may not honour the idempotency key",
		"tool", f.spec.Name, "run", f.run.ID, "key", f.key, "dependency", f.spec.Dependency,
		"header", f.spec.Idempotency.Header, "answer", string(answer), "read", string(read), "found", found)
}

// sameEffect reports whether a write's answer and its verify read show the
// same effect: equal values, or, for two objects, equal values under every
// name they both have (an answer may say more than a list's item).
func sameEffect(answer, read json.RawMessage) bool {
	a, errA := decodeNumbers(answer)
	r, errR := decodeNumbers(read)
	if errA != nil || errR != nil {
		return bytes.Equal(bytes.TrimSpace(answer), bytes.TrimSpace(read))
	}
	am, okA := a.(map[string]any)
	rm, okR := r.(map[string]any)
	if !okA || !okR {
		return reflect.DeepEqual(a, r)
	}
	for k, v := range am {
		if w, ok := rm[k]; ok && !reflect.DeepEqual(v, w) {
			return false
		}
	}
	return true
}

func decodeNumbers(b json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func orName(dependency, tool string) string {
	if dependency != "" {
		return dependency
	}
	return tool
}
