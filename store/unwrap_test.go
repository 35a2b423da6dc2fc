package store_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
)

// fakeFencer is a store that is a Fencer.
type fakeFencer struct{ store.Store }

func (fakeFencer) Fence() (store.Fence, error)                    { return store.Fence{Owner: "x"}, nil }
func (fakeFencer) Holds(store.Fence) bool                         { return true }
func (fakeFencer) TakeOver(context.Context, string) (bool, error) { return false, nil }

// wrapper wraps a store and says so, as an instrumented store does.
type wrapper struct{ store.Store }

func (w wrapper) Unwrap() store.Store { return w.Store }

// As finds an optional interface (here Fencer) through any depth of
// Unwrap, and none in a store that lacks it or a wrapper that hides it.
func TestAs(t *testing.T) {
	f := fakeFencer{memory.New()}
	for _, tc := range []struct {
		name string
		s    store.Store
		want bool
	}{
		{"the fencer", f, true},
		{"wrapped", wrapper{f}, true},
		{"wrapped twice", wrapper{wrapper{f}}, true},
		{"memory", memory.New(), false},
		{"wrapped memory", wrapper{memory.New()}, false},
		{"wrapper without Unwrap", struct{ store.Store }{f}, false},
	} {
		if _, got := store.As[store.Fencer](tc.s); got != tc.want {
			t.Errorf("%s: As found a Fencer: %v, want %v", tc.name, got, tc.want)
		}
	}
}
