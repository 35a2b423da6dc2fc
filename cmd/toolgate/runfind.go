package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// findRun finds the run a person names on the command line: the id its
// key gave it (p1), or its stored id (agent/p1). With key, the run is that
// key's; without, the one key's run of that id. When none has it, the
// error lists near ids; when several keys have it, it lists them and asks
// for --key.
func findRun(ctx context.Context, st store.Store, id, key string) (*types.Run, error) {
	if key != "" {
		run, err := st.GetRun(ctx, types.ScopedRunID(key, id))
		if errors.Is(err, store.ErrNotFound) {
			return nil, noRun(ctx, st, id, fmt.Sprintf("no run %q of the key %q", id, key))
		}
		return run, err
	}
	run, err := st.GetRun(ctx, id)
	if !errors.Is(err, store.ErrNotFound) {
		return run, err
	}
	var matches []store.RunSummary
	err = eachRun(ctx, st, store.RunFilter{Query: id}, func(r *store.RunSummary) {
		if r.PublicID() == id {
			matches = append(matches, *r)
		}
	})
	if err != nil {
		return nil, err
	}
	switch len(matches) {
	case 0:
		return nil, noRun(ctx, st, id, fmt.Sprintf("no run %q", id))
	case 1:
		return st.GetRun(ctx, matches[0].ID)
	}
	var keys []string
	for _, m := range matches {
		keys = append(keys, m.Owner)
	}
	sort.Strings(keys)
	return nil, fmt.Errorf("%d keys have a run %q (%s): say which with --key %s", len(keys), id, strings.Join(keys, ", "), keys[0])
}

// eachRun calls fn with every run f selects, a page at a time.
func eachRun(ctx context.Context, st store.Store, f store.RunFilter, fn func(*store.RunSummary)) error {
	f.Limit = 500
	for {
		runs, err := st.ListRuns(ctx, f)
		if err != nil {
			return err
		}
		for i := range runs {
			fn(&runs[i])
		}
		if len(runs) < f.Limit {
			return nil
		}
		pos := runs[len(runs)-1].Position()
		f.After = &pos
	}
}

// noRun is the error for a run not found: what was asked, and the ids
// of the store's runs that are near it (as KEY/ID when they have a key).
func noRun(ctx context.Context, st store.Store, id, what string) error {
	type near struct {
		name string
		d    int
	}
	var found []near
	limit := max(2, len(id)/3)
	err := eachRun(ctx, st, store.RunFilter{}, func(r *store.RunSummary) {
		d := min(expr.Distance(id, r.PublicID()), expr.Distance(id, r.ID))
		if d <= limit {
			found = append(found, near{r.ID, d})
		}
	})
	if err != nil || len(found) == 0 {
		return fmt.Errorf("%s in the store (toolgate runs list shows the runs)", what)
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].d < found[j].d })
	var names []string
	for _, n := range found[:min(len(found), 5)] {
		names = append(names, n.name)
	}
	return fmt.Errorf("%s in the store; near ones: %s (toolgate runs list shows the runs)", what, strings.Join(names, ", "))
}
