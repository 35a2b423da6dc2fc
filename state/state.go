// Package state is stage 7 of the pipeline: a run's state moves only by a
// pure function, apply(state, patch) -> new state, so that the old state is
// never damaged and the whole run can be replayed from its log.
//
// A patch is the set of top-level keys a successful call sets, computed from
// the tool's `state:` CEL expressions (Patch). The patch is recorded in the
// call's execution row; Replay folds the recorded patches, in commit order,
// over the run's initial state and must arrive at the stored state.
package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/types"
)

// Patch evaluates a tool's state expressions against the call (vars.State is
// the state before the call, vars.Result the call's data) and returns the
// keys to set. All expressions see the same old state: their order does not
// matter. A nil map of expressions gives a nil patch.
func Patch(exprs map[string]*expr.Program, vars *expr.Vars) (map[string]any, error) {
	if len(exprs) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(exprs))
	for k := range exprs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	patch := make(map[string]any, len(exprs))
	for _, k := range keys {
		v, err := exprs[k].Eval(vars)
		if err != nil {
			return nil, fmt.Errorf("state.%s: %w", k, err)
		}
		patch[k] = v
	}
	return patch, nil
}

// Apply returns the state with the patch's keys set. It never modifies old:
// the result is a new canonical JSON document.
func Apply(old json.RawMessage, patch map[string]any) (json.RawMessage, error) {
	cur, err := Decode(old)
	if err != nil {
		return nil, err
	}
	next := make(map[string]any, len(cur)+len(patch))
	for k, v := range cur {
		next[k] = v
	}
	for k, v := range patch {
		next[k] = v
	}
	return jsontext.Canonical(next), nil
}

// ApplyRaw applies a patch recorded as a JSON object.
func ApplyRaw(old, patch json.RawMessage) (json.RawMessage, error) {
	if len(patch) == 0 || bytes.Equal(patch, []byte("null")) {
		return Canonicalize(old)
	}
	p, err := Decode(patch)
	if err != nil {
		return nil, fmt.Errorf("state patch: %w", err)
	}
	return Apply(old, p)
}

// Decode reads a state document; empty or null is the empty state.
func Decode(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return map[string]any{}, nil
	}
	m, err := jsontext.DecodeObject(raw)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	return m, nil
}

// Canonicalize returns the canonical encoding of a state document.
func Canonicalize(raw json.RawMessage) (json.RawMessage, error) {
	m, err := Decode(raw)
	if err != nil {
		return nil, err
	}
	return jsontext.Canonical(m), nil
}

// Replay folds the recorded patches of rows, in ascending Version order,
// over initial, and returns the state they build.
func Replay(initial json.RawMessage, rows []types.Execution) (json.RawMessage, error) {
	sorted := append([]types.Execution(nil), rows...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Version < sorted[j].Version })
	st, err := Canonicalize(initial)
	if err != nil {
		return nil, err
	}
	for _, r := range sorted {
		if st, err = ApplyRaw(st, r.StatePatch); err != nil {
			return nil, fmt.Errorf("replay step %d (%s): %w", r.Step, r.Tool, err)
		}
	}
	return st, nil
}

// Equal reports whether two state documents hold the same values.
func Equal(a, b json.RawMessage) bool {
	ca, err1 := Canonicalize(a)
	cb, err2 := Canonicalize(b)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}
