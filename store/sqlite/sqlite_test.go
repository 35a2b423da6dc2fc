package sqlite_test

import (
	"errors"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/sqlite"
	"github.com/toolgate/toolgate/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// openTemp opens a fresh database in tb's temporary directory and closes it
// when tb ends.
func openTemp(tb testing.TB) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(tb.Context(), filepath.Join(tb.TempDir(), "toolgate.db"), sqlite.Options{Owner: "test"})
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
			tb.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t) })
}
