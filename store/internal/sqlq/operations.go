package sqlq

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// OperationColumns are the columns of an operation row, in the order
// ScanOperation reads them.
const OperationColumns = `"key", args_hash, args, run_id, tool, status, result, owner, lease_until, created_at, updated_at, completed_at`

// The operation statements, in PostgreSQL's form (see Dialect.Bind).
const (
	// BeginOperationSQL inserts an operation as started unless its key
	// exists (BeginArgs).
	BeginOperationSQL = `INSERT INTO operations (` + OperationColumns + `)
VALUES ($1, $2, $3, $4, $5, 'started', NULL, $6, $7, $8, $9, 0) ON CONFLICT ("key") DO NOTHING`
	// SelectOperationSQL reads the operation of a key.
	SelectOperationSQL = `SELECT ` + OperationColumns + ` FROM operations WHERE "key" = $1`
	// listOperationsSQL lists the operations in a status; %s is the
	// dialect's insertion order.
	listOperationsSQL = `SELECT ` + OperationColumns + ` FROM operations WHERE status = $1 ORDER BY created_at, %s LIMIT $2`
)

// BeginArgs are the arguments of Queries.BeginOperation for op: an empty
// Owner is owner, a zero CreatedAt is c's now and a zero UpdatedAt is
// CreatedAt.
func (d *Dialect) BeginArgs(op *types.Operation, owner string, c clock.Clock) []any {
	if op.Owner != "" {
		owner = op.Owner
	}
	created, updated := createdUpdated(op.CreatedAt, op.UpdatedAt, c)
	return []any{op.Key, op.ArgsHash, d.JSONArg(op.Args), op.RunID, op.Tool, owner,
		Nanos(op.LeaseUntil), created, updated}
}

// ScanOperation reads one row of OperationColumns with c's destinations;
// the driver's error as it is when there is no row.
func ScanOperation(row Row, c Columns) (*types.Operation, error) {
	var op types.Operation
	if err := scanOperation(row, c, &op); err != nil {
		return nil, err
	}
	return &op, nil
}

// scanOperation reads one row of OperationColumns into op.
func scanOperation(row Row, c Columns, op *types.Operation) error {
	return row.Scan(&op.Key, &op.ArgsHash, c.JSON(&op.Args), &op.RunID, &op.Tool, &op.Status, c.JSON(&op.Result),
		&op.Owner, c.Time(&op.LeaseUntil), c.Time(&op.CreatedAt), c.Time(&op.UpdatedAt), c.Time(&op.CompletedAt))
}

// GetOperation reads the operation, or answers store.ErrNotFound.
func (r Reads) GetOperation(ctx context.Context, key string) (*types.Operation, error) {
	if r.db.Closed() {
		return nil, errClosed
	}
	op, err := ScanOperation(r.db.QueryRow(ctx, r.q.SelectOperation, key), r.cols)
	if r.db.NoRows(err) {
		return nil, r.notFound(fmt.Sprintf("get operation %q", key))
	}
	if err != nil {
		return nil, r.db.ReadErr(fmt.Sprintf("get operation %q", key), err)
	}
	return op, nil
}

// ListOperations returns the operations in status, oldest (CreatedAt, then
// insertion) first; a limit of 0 or less means 100.
func (r Reads) ListOperations(ctx context.Context, status types.OpStatus, limit int) ([]types.Operation, error) {
	query, args := r.q.listOperations, []any{string(status), listLimit(limit)}
	if q, ok := r.q.listOperationsIn[status]; ok {
		query, args = q, args[1:]
	}
	return list(ctx, r, "list operations", query, args, func(row Row, op *types.Operation) error {
		return scanOperation(row, r.cols, op)
	})
}

// AdmitArgs are an admission's arguments as both stores bind them: the
// store clock's now and the admission's own time, in stored nanoseconds,
// and the operation's begin arguments (nil without an operation).
func (d *Dialect) AdmitArgs(a *store.Admission, owner string, c clock.Clock) (now, at int64, opArgs []any) {
	if a.Operation != nil {
		opArgs = d.BeginArgs(a.Operation, owner, c)
	}
	return Nanos(c.Now()), Nanos(a.Now), opArgs
}
