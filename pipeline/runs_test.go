package pipeline_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/store"
)

// A run started for a key is stored as that key's run (KEY/ID), whoever
// starts it (the server, the MCP layer, toolgate call --owner, a library
// user), so the key sees it by its id and another key's run of the same id
// is another run.
func TestStartRunScopesToItsOwner(t *testing.T) {
	gw := setup(t, setupOpts{}).gw
	ctx := context.Background()
	for _, c := range []struct{ owner, id, stored string }{
		{"support-bot", "r1", "support-bot/r1"},
		{"ops", "r1", "ops/r1"},
		{"ops", "ops/r2", "ops/r2"}, // already scoped: as it is
		{"", "r1", "r1"},            // no owner: the library's own id
	} {
		run, err := gw.StartRun(ctx, toolgate.RunOptions{ID: c.id, Owner: c.owner, Principal: toolgate.Principal{ID: "p"}})
		if err != nil {
			t.Fatalf("%s's %s: %v", c.owner, c.id, err)
		}
		if run.ID != c.stored {
			t.Errorf("%s's %s stored as %q, want %q", c.owner, c.id, run.ID, c.stored)
		}
	}
	if _, err := gw.StartRun(ctx, toolgate.RunOptions{ID: "r1", Owner: "ops", Principal: toolgate.Principal{ID: "p"}}); !errors.Is(err, store.ErrRunExists) {
		t.Errorf("ops's r1 again: %v, want ErrRunExists", err)
	}
}
