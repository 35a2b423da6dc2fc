package types

import "testing"

func TestRunScope(t *testing.T) {
	tests := []struct {
		owner, id           string
		stored, public, key string
	}{
		{"", "r1", "r1", "r1", "k"},
		{"support-bot", "r1", "support-bot/r1", "r1", "support-bot/k"},
		{"support-bot", "support-bot/r1", "support-bot/r1", "r1", "support-bot/k"},
		{"a", "a/b", "a/b", "b", "a/k"},
	}
	for _, tt := range tests {
		stored := ScopedRunID(tt.owner, tt.id)
		run := &Run{ID: stored, Owner: tt.owner}
		if stored != tt.stored || run.PublicID() != tt.public || run.ScopeOperationKey("k") != tt.key {
			t.Errorf("(%q, %q): stored %q public %q key %q; want %q %q %q", tt.owner, tt.id, stored, run.PublicID(), run.ScopeOperationKey("k"), tt.stored, tt.public, tt.key)
		}
	}
	// A run made before run ids were scoped keeps its id and its keys.
	legacy := &Run{ID: "r1", Owner: "support-bot"}
	if legacy.Scoped() || legacy.PublicID() != "r1" || legacy.ScopeOperationKey("k") != "k" {
		t.Errorf("legacy run: scoped %v public %q key %q", legacy.Scoped(), legacy.PublicID(), legacy.ScopeOperationKey("k"))
	}
}
