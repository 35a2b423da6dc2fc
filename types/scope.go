package types

import "strings"

// Tenancy follows the bearer key. A run created through the server with a
// key is stored under the id ScopedRunID(key name, id): two keys may each
// have a run "r1", and neither can learn that the other's exists. The
// server and the MCP layer translate at the edge; the stores and the
// pipeline see the scoped id only.

// ScopedRunID is the stored id of the run that the key named owner calls
// id: "owner/id", or id itself without an owner (development mode, the
// library). An id already scoped to owner is returned as it is.
func ScopedRunID(owner, id string) string {
	if owner == "" || strings.HasPrefix(id, owner+"/") {
		return id
	}
	return owner + "/" + id
}

// Scoped reports whether the run's stored id is scoped to its owner (runs
// created before run ids were scoped, and runs without an owner, are not).
func (r *Run) Scoped() bool {
	return r.Owner != "" && len(r.ID) > len(r.Owner)+1 && strings.HasPrefix(r.ID, r.Owner+"/")
}

// PublicID is the id the run's owner knows it by: the stored id without
// its owner's scope.
func (r *Run) PublicID() string {
	if r.Scoped() {
		return r.ID[len(r.Owner)+1:]
	}
	return r.ID
}

// ScopeOperationKey scopes an operation key to the run's owner, so that
// another key's identical operation (an idempotency.key template without
// {run_id}) is another operation, in the ledger and at the dependency.
// The keys of unscoped runs are left as they are.
func (r *Run) ScopeOperationKey(key string) string {
	if key == "" {
		return key
	}
	return r.KeyScope() + key
}

// KeyScope is what ScopeOperationKey puts before a key: the owner and a
// slash for a scoped run, "" otherwise. The pipeline reads it once per
// call.
func (r *Run) KeyScope() string {
	if !r.Scoped() {
		return ""
	}
	return r.Owner + "/"
}
