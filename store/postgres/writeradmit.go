package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// admitAndBegin is AdmitAndBegin through the writer: admitAndBeginSQL, one
// statement that always answers one row, so a spent budget or a missing
// run is a refusal that wrote nothing, never a failed batch. When the key
// existed, the step is taken (committed with the batch) and the record is
// read afterwards on a connection of the pool, as a single write would.
func (s *Store) admitAndBegin(ctx context.Context, runID string, op *types.Operation) (int64, *types.Operation, bool, error) {
	now := nanos(s.opts.Clock.Now())
	args := append(s.beginArgs(op), now, runID)
	var step int64
	var inserted bool
	r := &request{op: fmt.Sprintf("admit and begin %q on run %q", op.Key, runID), runID: runID, rounds: 1}
	r.queue = func(_ int, b *pgx.Batch) int { b.Queue(admitAndBeginSQL, args...); return 1 }
	r.read = func(_ int, br pgx.BatchResults) (error, error) {
		var admitted *int64
		var exists bool
		if err := br.QueryRow().Scan(&admitted, &exists, &inserted); err != nil {
			return nil, err
		}
		switch {
		case admitted == nil && !exists:
			return store.ErrNotFound, nil
		case admitted == nil:
			return store.ErrStepBudget, nil
		}
		step = *admitted
		return nil, nil
	}
	if err := s.w.do(ctx, r); err != nil {
		return 0, nil, false, err
	}
	if inserted {
		return step, nil, true, nil
	}
	// The key exists (or existed a moment ago): read it, or begin afresh
	// if it was deleted in between; the step is ours already, so ctx's
	// cancellation no longer applies (its deadline does).
	var existing *types.Operation
	dctx, cancel := detach(ctx)
	defer cancel()
	err := s.write(dctx, r.op, func(ctx context.Context, conn *pgxpool.Conn) (err error) {
		existing, err = beginOnConn(ctx, conn, args[:9], op.Key)
		return err
	})
	if err != nil {
		return 0, nil, false, err
	}
	return step, existing, existing == nil, nil
}
