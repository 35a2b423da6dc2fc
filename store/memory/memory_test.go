package memory_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s := memory.New()
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func BenchmarkCommit(b *testing.B) {
	storetest.CommitBenchmark(b, func(b *testing.B) store.Store {
		s := memory.New()
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}
