// Package sqlite is the store.Store of toolgate in one SQLite file, on the
// pure-Go driver modernc.org/sqlite (no cgo).
//
// # Durability
//
// The file is in WAL mode. Every write that records or settles an effect
// (a run, an operation record, a state change, a commit that settles an
// operation) commits with synchronous=FULL: it is not answered before the
// WAL is fsynced. Writes that record no effect (a step admission, the row
// of a read or a refusal, stats buckets) are batched apart and commit with
// synchronous=NORMAL: they are in the WAL, so they survive a crash of the
// process (kill -9), and reach the disk with the next fsync; a power loss
// may lose the last of them, never an effect. The WAL keeps commits in
// order, so a later fsync makes every earlier commit durable. The schema is
// created and upgraded by embedded migrations (migrations/NNNN_*.sql) when
// the file is opened; its version is PRAGMA user_version, and a file from a
// newer toolgate is refused (*SchemaVersionError), never altered.
//
// # Group commit
//
// Every write (CreateRun, AdmitStep, BeginOperation, ClaimOperation,
// ExpireLeases, AbandonOwner, Commit, Prune) is a request sent to one writer
// goroutine that owns the only write connection. The writer waits for a
// request, takes every other request already queued (up to
// Options.MaxBatch), and runs them in one transaction, each inside its own
// SAVEPOINT: a request that fails (ErrVersionConflict, ErrRunExists, ...)
// rolls back to its savepoint and fails alone. The writer then COMMITs once
// and only then answers every caller of the batch. If the transaction
// itself fails (BEGIN, COMMIT, a broken savepoint), every request of the
// batch gets that error and none of them is written. One fsync is thus
// shared by all the writes that arrived while the previous one was being
// made: the more concurrent callers, the fewer fsyncs per write.
//
// Encoding (JSON, times) happens in the caller's goroutine; the writer only
// runs prepared statements.
//
// # Context
//
// A write's ctx governs its admission. A caller whose ctx ends before the
// writer takes its request gets ctx.Err() (wrapped) and the request never
// runs. Once taken, the request runs and the caller waits for the
// outcome of its batch, a bounded wait of one transaction, and gets the
// true answer even if its ctx ended meanwhile. So an error that is a
// context error always means "not written", and no write is ever left in
// an unknown state by a caller that gave up.
//
// # Reads
//
// GetRun, GetOperation, ListExecutions and ListOperations use a separate
// pool of read-only connections; in WAL mode they never wait for the writer
// and see every write that has been answered.
//
// Close runs the writes already queued, stops the writer goroutine and
// closes every connection.
package sqlite
