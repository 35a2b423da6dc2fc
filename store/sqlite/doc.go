// Package sqlite is the store.Store of toolgate in one SQLite file, on the
// pure-Go driver modernc.org/sqlite (no cgo).
//
// # Durability
//
// The file is in WAL mode. A write that records or settles an effect (a
// run, an operation record, a state change, a commit that settles an
// operation) is not answered before the WAL holding it is fsynced. Writes
// that record no effect (a step admission, the row of a read or a refusal,
// stats buckets) are answered as soon as they are committed: they are in
// the WAL, so they survive a crash of the process (kill -9), and reach the
// disk with the next fsync; a power loss may lose the last of them, never
// an effect. The schema is created and upgraded by embedded migrations
// (migrations/NNNN_*.sql) when the file is opened; its version is PRAGMA
// user_version, and a file from a newer toolgate is refused
// (*SchemaVersionError), never altered.
//
// The writer commits every batch with synchronous=NORMAL: the WAL frames
// are written, not fsynced. A second goroutine (walSync) fsyncs the WAL
// file through a descriptor of its own and then answers the callers of
// every batch committed before that fsync began, while the writer runs the
// next batch. Why an answered write is as durable as with an fsync inside
// its COMMIT (synchronous=FULL):
//
//   - fsync flushes a file (its inode), data and size, whatever descriptor
//     wrote it: the frames SQLite wrote with pwrite before the COMMIT
//     returned are on disk once an fsync begun after it returns.
//   - Recovery keeps the longest prefix of the WAL whose frames are whole
//     (each frame's checksum chains to the one before) and ends at a
//     commit frame. Everything up to a batch's commit frame was written
//     before its fsync began, so the batch and every earlier one survive.
//     A later batch half on disk is cut off; the prefix stands. This is
//     also why a batch's answers, which may depend on the batches before
//     it (a version, an operation another caller began), never outlive
//     them: those are on disk first.
//   - After a checkpoint has copied every frame into the database file,
//     the next write starts the WAL over from its beginning, overwriting
//     frames perhaps not yet fsynced by walSync. Their content is safe
//     anyway: with synchronous=NORMAL SQLite still fsyncs the WAL before a
//     checkpoint and the database file after a complete one, and it starts
//     the WAL over only after a complete checkpoint. The frames written
//     after the restart are in the same file, covered by the next fsync.
//     (This holds as long as every connection that checkpoints the file
//     syncs, as all of toolgate's do: one at synchronous=OFF, in another
//     program, could checkpoint without the fsyncs.)
//   - The WAL file is the same file for as long as the write connection is
//     open: SQLite deletes it only when the last connection to the database
//     closes (and the writer's closes after walSync has answered its last
//     batch), and journal_size_limit, which toolgate does not set, would
//     only truncate it. walSync still checks after each fsync that the name
//     is the file it holds, and fsyncs the new one if not. The directory
//     is fsynced once, at Open, so that the WAL's entry is on disk.
//   - An fsync that fails is fatal ("fsyncgate": the kernel may have
//     dropped the pages it could not write, and a later fsync would
//     succeed without them). The callers waiting for it get the error, and
//     so does every later write: the store takes none until it is opened
//     again, when SQLite recovers from what the disk holds. The writes of
//     those callers may or may not have been kept: as for any error but a
//     context error, their outcome is unknown.
//
// Reads may see a batch for the moment between its COMMIT and its fsync,
// before its callers are answered; a power loss then, not a crash of the
// process, would lose what they saw. Every write that depends on it is in
// a later batch, answered after a later fsync. Were the file not in WAL
// mode (some network file systems), every COMMIT fsyncs instead
// (synchronous=FULL), light writes included.
//
// # Group commit
//
// Every write (CreateRun, AdmitStep, BeginOperation, ClaimOperation,
// ExpireLeases, AbandonOwner, Commit, Prune) is a request sent to one writer
// goroutine that owns the only write connection. The writer waits for a
// request, takes every other request already queued (up to
// Options.MaxBatch), and runs them in one transaction; while walSync is
// still fsyncing the batches before, it keeps the transaction open and
// takes the requests that arrive meanwhile. The requests run straight in
// the transaction; should one fail (ErrVersionConflict, ErrRunExists, ...),
// the transaction is rolled back and run again with each request inside
// its own SAVEPOINT, so that the failing request rolls back to its
// savepoint and fails alone. The writer then COMMITs once, and every caller
// of the batch is answered once it is durable. If the transaction itself
// fails (BEGIN, COMMIT, a broken savepoint), every request of the batch
// gets that error and none of them is written. One fsync is thus shared by
// all the writes that arrived while the previous one was being made: the
// more concurrent callers, the fewer fsyncs per write.
//
// Encoding (JSON, times) happens in the caller's goroutine; the writer only
// runs prepared statements.
//
// # Context
//
// A write's ctx governs its admission. A caller whose ctx ends before the
// writer takes its request gets ctx.Err() (wrapped) and the request never
// runs. Once taken, the request runs and the caller waits for the outcome
// of its batch, a bounded wait of one transaction (which may wait for the
// fsync before it) and its fsync, and gets the true answer even if its ctx
// ended meanwhile. So an error that is a context error always means "not
// written", and no write is ever left in an unknown state by a caller that
// gave up.
//
// # Reads
//
// GetRun, GetOperation, ListExecutions and ListOperations use a separate
// pool of read-only connections; in WAL mode they never wait for the writer
// and see every write that has been answered (and, for a moment, committed
// batches not yet answered: see Durability).
//
// Close runs the writes already queued, waits for their fsync, stops the
// writer goroutines and closes every connection.
package sqlite
