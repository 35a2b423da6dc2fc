// Package postgres is the store.Store of toolgate in PostgreSQL, on
// github.com/jackc/pgx/v5 (pgxpool). Several toolgate replicas may share one
// database: the ledger's arbiter is the primary key of the operations
// table, not anything held in a process.
//
// # Schema and migrations
//
// The tables live in Options.Schema (created if missing) or, when that is
// empty, in the first existing schema of the connection's search_path. They
// are created and upgraded by embedded migrations (migrations/NNNN_*.sql)
// when the store is opened, all missing migrations in one transaction that
// first takes a transaction-scoped advisory lock
// (pg_advisory_xact_lock(MigrationLockClass, hashtext(schema))). Replicas
// starting together therefore migrate one after the other: the first
// applies the migrations, the others wait for its COMMIT and then find
// nothing to do. The applied versions are rows of schema_migrations; a
// schema from a newer toolgate is refused (*SchemaVersionError), never
// altered.
//
// # Durability and group commit
//
// Every write is answered after PostgreSQL's COMMIT returned, so with the
// default synchronous_commit=on it is in the flushed WAL.
//
// Commit and AdmitAndBegin, the two writes of every recorded call, go
// through the store's writer: a queue and writerConns connections of its
// own, outside the pool. A caller that finds a connection idle leads the
// next batch: it takes the queued writes of concurrent calls and packs up
// to maxBatch of them into one transaction,
// sent as one pipelined batch: the writes' statements and one Sync, which
// PostgreSQL runs as one implicit transaction (one round trip; two, in
// BEGIN ... COMMIT, when a Commit takes its step, whose row depends on
// the step). The writes of a batch are sorted by run, so that every replica
// takes the row locks of runs in one order. Each write is one statement
// that answers a row even when it refuses (a spent step budget, a missing
// run) or no row when it wrote nothing (a version conflict, a missing
// operation): a refusal is that write's own outcome, the batch commits
// the others. A write whose statement fails (a server error) aborts the
// batch: it is rolled back, sent again without that write, which then runs
// in a transaction of its own and gets its own error (WriterStats counts
// the batches, the writes and these rollbacks). The other writes
// (CreateRun, BeginOperation, Admit, ...) are one transaction each on a
// pool connection (Options.MaxConns, default 16); PostgreSQL groups the WAL
// flushes of concurrent transactions. docs/scaling.md gives the costs.
//
// Each write is one statement where it can be: Commit is a single
// statement of data-modifying CTEs (lock the operation, update the run at
// the expected version, settle or delete the operation, insert the
// execution row at the run's new version), which writes all of it or none
// of it. The prepared statements are cached per connection by pgx; behind
// a pooler in transaction mode (PgBouncer), add
// default_query_exec_mode=exec to the URL.
//
// # Context
//
// As in store/sqlite, a write's ctx governs its admission: a caller whose
// ctx ends before a connection is free gets ctx.Err() (wrapped) and nothing
// is written. Once it holds a connection, the write runs to its end under
// context.WithoutCancel(ctx), bounded by Options.WriteTimeout or ctx's
// deadline, whichever is nearer, so an error that is the caller's context
// error always means "not written". A write cut by that bound fails with
// an error that says its outcome is unknown, wraps store.ErrUnavailable,
// and is not a context error. A caller of a batched write (Commit,
// AdmitAndBegin) waits no longer than its deadline either.
//
// # Faults
//
// Every error that says the database could not be reached or did not
// answer (a refused, reset or silent connection, a restart, a server out
// of connections or disk) wraps store.ErrUnavailable; the pipeline answers
// store_unavailable for an admission that fails so. A read of one row is
// bounded by Options.ReadTimeout while the liveness is not confirmed; a
// failed liveness ping cuts the reads and writes in flight (a partition
// may leave their connections open and silent). A connection
// broken during a fault is not used again: pgx closes one that failed,
// the pool pings one idle for more than a second before lending it, and
// the writer does the same with its own connections, and sends a batch
// again, once, on a new connection when the old one failed before
// anything was sent. docs/reliability-postgres.md says what a caller sees.
//
// # Replicas and leases
//
// Open never abandons started operations: on a shared database they may
// belong to a live replica. An operation whose owner died stays started
// until its owner is found dead (below) or its lease
// (Operation.LeaseUntil) ends; then ExpireLeases turns it into unknown,
// which the pipeline does when it meets one, and which
// Options.ExpireLeasesEvery does in the background. AbandonOwner remains
// for a process that knows it restarted under a unique owner name.
//
// # Liveness and fencing
//
// The store is a store.Fencer. From Open to Close it holds a session-level
// advisory lock (pg_try_advisory_lock(LivenessLockKey(schema, owner id)))
// on a connection of its own, outside the pool, under an owner id made of
// Options.Owner, a generation number and a random part: unique to this
// process and to this holding of the lock. It pings that connection every
// LivenessOptions.Keepalive; a ping that answers confirms liveness for
// LivenessOptions.Bound from the moment it was sent. A ping that fails or
// does not answer within Bound closes the connection: from then on Fence
// answers store.ErrNotLive and no earlier fence Holds again, until the
// lock is taken again on a new connection under a new owner id (the
// previous session, if the server still holds it, is then terminated).
//
// TakeOver(owner) tries owner's lock on a pool connection (and releases it
// at once). Once the lock is free, owner's session has ended, so owner's
// last confirmed ping was sent before that moment and owner stops sending
// at most Bound later. TakeOver waits LivenessOptions.TakeoverDelay (more
// than Bound) after it first found the lock free, measured on its own
// monotonic clock, and then turns owner's started operations into unknown
// ones. An owner id without the generation and random part (a replica of
// an earlier toolgate, a store with liveness disabled) holds no lock and
// is never taken over so: its leases apply. Only durations measured within
// one process are compared, never the wall clocks of two machines.
// docs/replicas.md says what this guarantees under clock skew and network
// partitions. The lock needs a session of its own: behind PgBouncer in
// transaction mode, connect to PostgreSQL directly or in session mode.
package postgres
