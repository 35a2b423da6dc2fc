package sqlite

import "context"

// batch is the transaction the writer is filling.
type batch struct {
	// reqs are the requests taken into it, answered together.
	reqs []*request
	// inTx are those that ran in the open transaction: what a rollback
	// undoes (not a request that failed first in it: see add).
	inTx []*request
	// careful is set once a request failed: each request runs in its own
	// savepoint from then on.
	careful bool
	// light is set while every request records no effect: see doLight.
	light bool
	// queued are the requests taken before the transaction began.
	queued []*request
}

// runBatch runs first and whatever else is already queued, up to
// maxBatch, in one transaction, commits it and answers every caller: each
// its own outcome, or all the error that failed the transaction as a
// whole.
//
// Callers are answered once the batch is durable. A batch that holds an
// effect is handed to the fsyncer, which answers it after its next fsync
// of the WAL; the others are answered here, after the COMMIT. While the
// fsyncer is still busy with earlier batches, there is no hurry to commit:
// the batch's callers would wait for that fsync to end anyway. So the
// transaction stays open and takes the requests that arrive meanwhile, and
// it is committed when the fsyncer is free: the fsync and the next batch's
// statements overlap, and batches stay as large as when each COMMIT
// fsynced, rather than many small ones, each writing the pages it
// touches to the WAL.
func (w *writer) runBatch(ctx context.Context, b *batch, first *request) {
	if w.durable != nil {
		// After a failed fsync nothing more is written: see walSync.
		if err := w.durable.failure(); err != nil {
			first.done <- err
			return
		}
	}
	// Take what is queued now, before running any of it.
	b.queued = w.drainQueued(append(b.queued, first))
	b.light = true
	w.batches.Add(1)
	err := w.begin(ctx)
	for _, req := range b.queued {
		if err != nil {
			b.reqs = append(b.reqs, req)
		} else {
			err = w.add(ctx, b, req)
		}
	}
	if err == nil && w.durable != nil && !b.light {
		err = w.growWhileSyncing(ctx, b)
	}
	if err == nil {
		err = w.commit(ctx)
	}
	if err != nil {
		// Nothing of the batch was written: no fsync to wait for.
		answer(b.reqs, err)
		return
	}
	w.answerCommitted(b)
}

// drainQueued appends to queued the requests already waiting on the
// channel, without waiting for more, up to maxBatch; those abandoned by
// their callers are left out.
func (w *writer) drainQueued(queued []*request) []*request {
	for len(queued) < w.maxBatch {
		select {
		case req, ok := <-w.requests:
			if !ok {
				return queued
			}
			if w.take(req) {
				queued = append(queued, req)
			}
		default:
			return queued
		}
	}
	return queued
}

// growWhileSyncing keeps the open transaction of a batch holding an effect
// while the fsyncer is busy with earlier batches, adding the requests that
// arrive meanwhile, up to maxBatch. Then it commits nothing the fsyncer
// could not make durable: after a failed fsync the batch is rolled back.
func (w *writer) growWhileSyncing(ctx context.Context, b *batch) error {
	for len(b.reqs) < w.maxBatch && w.durable.busy() {
		select {
		case req, ok := <-w.requests:
			if !ok {
				return w.failedSync(ctx)
			}
			if w.take(req) {
				if err := w.add(ctx, b, req); err != nil {
					return err
				}
			}
		case <-w.durable.idle:
		}
	}
	return w.failedSync(ctx)
}

// failedSync rolls the open transaction back and returns the fsyncer's
// failure, if it has failed; else it returns nil.
func (w *writer) failedSync(ctx context.Context) error {
	if err := w.durable.failure(); err != nil {
		w.rollback(ctx)
		return err
	}
	return nil
}

// answerCommitted runs, in commit order, the after hook of each request of
// a committed batch that succeeded, then answers the callers: at once when
// the batch is light or every COMMIT fsyncs, else by the fsyncer after its
// next fsync of the WAL.
func (w *writer) answerCommitted(b *batch) {
	for _, req := range b.reqs {
		if req.after != nil && req.outcome == nil {
			req.after()
		}
	}
	if b.light {
		w.lightBatches.Add(1)
	}
	if w.durable == nil || b.light {
		answer(b.reqs, nil)
		return
	}
	w.durable.add(b.reqs)
}

// answer gives each request of reqs err, or its own outcome when err is
// nil.
func answer(reqs []*request, err error) {
	for _, req := range reqs {
		if err != nil {
			req.done <- err
		} else {
			req.done <- req.outcome
		}
	}
}

// add runs req in the open transaction of b, its answer in its outcome.
// The error returned fails the whole batch: the transaction is broken and
// rolled back.
//
// Requests run straight in the transaction: a savepoint per request costs
// three statements and makes SQLite keep a copy of every page a request
// changes, for a failure that seldom comes. Should a request fail (or
// panic), the transaction is rolled back and the requests it held run
// again the careful way, each in its own savepoint, the failing one
// included, and so does every later request of the batch: the failure is
// that request's alone. The re-run starts from the same state and runs the
// same requests in the same order, so it sees what the first run saw; each
// request's apply only sets its own results, which the re-run overwrites.
// A request that fails first in its transaction needs no re-run: its
// failure is its outcome, and the rollback its undoing.
func (w *writer) add(ctx context.Context, b *batch, req *request) error {
	w.ran.Add(1)
	b.reqs, b.light = append(b.reqs, req), b.light && req.light
	if b.careful {
		outcome, err := w.runRequest(ctx, req)
		if err != nil {
			w.rollback(ctx)
			return err
		}
		req.outcome, b.inTx = outcome, append(b.inTx, req)
		return nil
	}
	if req.outcome = applySafely(ctx, req, &w.tx); req.outcome == nil {
		b.inTx = append(b.inTx, req)
		return nil
	}
	w.rollback(ctx)
	if err := w.begin(ctx); err != nil {
		return err
	}
	if len(b.inTx) == 0 {
		return nil
	}
	w.reruns.Add(1)
	b.careful, b.inTx = true, append(b.inTx, req)
	for _, r := range b.inTx {
		outcome, err := w.runRequest(ctx, r)
		if err != nil {
			w.rollback(ctx)
			return err
		}
		r.outcome = outcome
	}
	return nil
}
