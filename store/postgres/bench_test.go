package postgres_test

import (
	"testing"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/postgres"
	"github.com/toolgate/toolgate/store/postgres/postgrestest"
	"github.com/toolgate/toolgate/store/storetest"
)

// BenchmarkCommit is storetest's commit benchmark (1, 8 and 64 concurrent
// committers, each on its own run) on PostgreSQL, a fresh schema per
// sub-benchmark. PostgreSQL groups the WAL flushes of concurrent commits.
func BenchmarkCommit(b *testing.B) {
	storetest.CommitBenchmark(b, func(b *testing.B) store.Store { return postgrestest.Open(b, postgres.Options{}) })
}
