package types

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// Principal is who a run acts for.
type Principal struct {
	ID          string   `json:"id"`
	Permissions []string `json:"permissions,omitempty"`
	// Limits are numbers (max_refund_paise: 500000), kept exact.
	Limits map[string]json.Number `json:"limits,omitempty"`
	Attrs  map[string]any         `json:"attrs,omitempty"`
}

// Can reports whether the principal holds a permission. An empty permission
// is held by everyone; "*" in Permissions grants all.
func (p *Principal) Can(permission string) bool {
	if permission == "" {
		return true
	}
	for _, have := range p.Permissions {
		if have == permission || have == "*" {
			return true
		}
	}
	return false
}

// Run is one agent conversation or task.
type Run struct {
	ID        string    `json:"run_id"`
	Principal Principal `json:"principal"`
	// State is the run's domain state, a JSON object. It is replaced, never
	// mutated: a new state is a new byte slice.
	State json.RawMessage `json:"state"`
	// InitialState is the state the run was created with; replay starts here.
	InitialState json.RawMessage `json:"initial_state,omitempty"`
	// Step counts admitted calls; each call takes the next step at admission.
	Step int64 `json:"step"`
	// Version counts committed calls; it guards state updates (optimistic
	// concurrency: a commit names the version it read).
	Version int64 `json:"version"`
	// MaxSteps bounds Step; 0 is no bound (see OutOfSteps).
	MaxSteps int64 `json:"max_steps,omitempty"`
	// Owner is the name of the API key that created the run ("" in dev mode).
	Owner     string    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// OutOfSteps reports whether the run has taken every step MaxSteps allows:
// a call that has not taken its step yet is refused
// (step_budget_exhausted).
func (r *Run) OutOfSteps() bool { return r.MaxSteps > 0 && r.Step >= r.MaxSteps }

// Clone returns a deep copy of p: its permissions, limits and, recursively,
// the maps, slices and raw JSON inside its attributes share nothing with p.
func (p Principal) Clone() Principal {
	p.Permissions = slices.Clone(p.Permissions)
	p.Limits = maps.Clone(p.Limits)
	if p.Attrs != nil {
		attrs := make(map[string]any, len(p.Attrs))
		for k, v := range p.Attrs {
			attrs[k] = cloneValue(v)
		}
		p.Attrs = attrs
	}
	return p
}

// cloneValue deep-copies the JSON-shaped containers in v; other values are
// returned as they are.
func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(v))
		for k, e := range v {
			c[k] = cloneValue(e)
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, e := range v {
			c[i] = cloneValue(e)
		}
		return c
	case json.RawMessage:
		if v == nil {
			return v
		}
		return json.RawMessage(bytes.Clone(v))
	case []byte:
		return bytes.Clone(v)
	}
	return v
}
