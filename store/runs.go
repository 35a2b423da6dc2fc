package store

import (
	"context"
	"strings"
	"time"

	"github.com/toolgate/toolgate/types"
)

// RunLister lists runs (part of Store): GET /v1/runs and `toolgate runs
// list` need it.
type RunLister interface {
	// ListRuns returns the runs f selects, newest first: by CreatedAt,
	// then by ID, both descending. A limit of 0 or less means 100.
	ListRuns(ctx context.Context, f RunFilter) ([]RunSummary, error)
}

// RunFilter selects runs. Every field left zero selects all.
type RunFilter struct {
	// Owner keeps the runs created with that API key.
	Owner string
	// PrincipalID keeps the runs acting for that principal.
	PrincipalID string
	// Tool keeps the runs with a call of that tool; Code the runs with a
	// call that ended with that outcome code. Both: one call of that tool
	// that ended so.
	Tool string
	Code types.Code
	// Query keeps the runs whose id (as their key knows it: PublicID) or
	// principal id contains it, ignoring case.
	Query string
	// Since keeps the runs created at or after it.
	Since time.Time
	// After, when set, keeps the runs after it in the list's order: the
	// position of the last run of the previous page.
	After *RunPosition
	// Limit caps the runs returned; 0 or less means 100.
	Limit int
}

// RunPosition is a run's place in the order of ListRuns.
type RunPosition struct {
	CreatedAt time.Time
	ID        string
}

// RunSummary is one run of a list: what it is, without its state and
// history.
type RunSummary struct {
	// ID is the stored id ("KEY/ID" for a run created with a key; see
	// types.ScopedRunID).
	ID string
	// Owner is the name of the API key that created the run ("" without
	// keys).
	Owner       string
	PrincipalID string
	Step        int64
	MaxSteps    int64
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// LastTool and LastCode are the tool and the outcome of the run's last
	// committed call ("" before its first).
	LastTool string
	LastCode types.Code
}

// PublicID is the id the run's key knows it by.
func (r *RunSummary) PublicID() string {
	run := types.Run{ID: r.ID, Owner: r.Owner}
	return run.PublicID()
}

// Position is the run's place in the order of ListRuns.
func (r *RunSummary) Position() RunPosition { return RunPosition{CreatedAt: r.CreatedAt, ID: r.ID} }

// Matches reports whether the run is one f's Owner, PrincipalID, Query,
// Since and After keep (Tool and Code are judged on its calls, and Limit
// on the list: they are not looked at). Stores that filter in Go use it.
func (f *RunFilter) Matches(r *RunSummary) bool {
	switch {
	case f.Owner != "" && r.Owner != f.Owner,
		f.PrincipalID != "" && r.PrincipalID != f.PrincipalID,
		!f.Since.IsZero() && r.CreatedAt.Before(f.Since),
		f.After != nil && !Before(f.After, r.Position()):
		return false
	}
	if f.Query == "" {
		return true
	}
	q := strings.ToLower(f.Query)
	return strings.Contains(strings.ToLower(r.PublicID()), q) || strings.Contains(strings.ToLower(r.PrincipalID), q)
}

// Before reports whether a comes before b in the order of ListRuns (newest
// first, then the greater id first).
func Before(a *RunPosition, b RunPosition) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}
