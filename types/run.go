package types

import (
	"encoding/json"
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
	Version  int64 `json:"version"`
	MaxSteps int64 `json:"max_steps,omitempty"`
	// Owner is the name of the API key that created the run ("" in dev mode).
	Owner     string    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}
