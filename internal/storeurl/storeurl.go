// Package storeurl opens a store from the config's `store:` string.
package storeurl

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/store/sqlite"
)

// Open opens "memory", "sqlite:PATH" or (when built in) "postgres://...".
//
// A SQLite store belongs to one process: every operation left started by an
// earlier process (a crash) is turned to unknown on open, so that its next
// call verifies before anything is sent again.
func Open(ctx context.Context, url, owner string) (store.Store, error) {
	switch {
	case url == "memory":
		return memory.New(), nil
	case strings.HasPrefix(url, "sqlite:"):
		st, err := sqlite.Open(ctx, strings.TrimPrefix(url, "sqlite:"), sqlite.Options{Owner: owner})
		if err != nil {
			return nil, err
		}
		if _, err := st.AbandonOwner(ctx, ""); err != nil {
			st.Close()
			return nil, fmt.Errorf("crash recovery: %w", err)
		}
		return st, nil
	}
	return nil, fmt.Errorf("store %q: unknown kind (use memory, sqlite:PATH or postgres://...)", url)
}
