package sqlq

import (
	"context"
	"errors"

	"github.com/toolgate/toolgate/store"
)

// approvalColumns are the columns of an approval row, in the order
// scanApproval reads them and ApprovalArgs gives them.
const approvalColumns = `id, tool, args_hash, args, principal_id, run_id, config_version, rule, reason, status,
decided_by, comment, created_at, decided_at, expires_at, used_by`

// The approval statements, in PostgreSQL's form (see Dialect.Bind).
const (
	insertApprovalSQL = `INSERT INTO approvals (` + approvalColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`
	selectApprovalSQL = `SELECT ` + approvalColumns + ` FROM approvals WHERE id = $1`
	findApprovalSQL   = `SELECT ` + approvalColumns + ` FROM approvals
WHERE tool = $1 AND args_hash = $2 AND principal_id = $3 AND config_version = $4 AND run_id = $5 ORDER BY created_at DESC, id DESC LIMIT 1`
	decideApprovalSQL = `UPDATE approvals SET status = $1, decided_by = $2, comment = $3, decided_at = $4
WHERE id = $5 AND status = 'pending' AND expires_at > $4`
	listApprovalsSQL = `SELECT ` + approvalColumns + ` FROM approvals WHERE ($1 = '' OR status = $1) ORDER BY created_at DESC, id DESC LIMIT $2`
)

// ApprovalArgs are the arguments of Queries.InsertApproval for a.
func (d *Dialect) ApprovalArgs(a *store.Approval) []any {
	return []any{a.ID, a.Tool, a.ArgsHash, d.JSONArg(a.Args), a.PrincipalID, a.RunID, a.ConfigVersion, a.Rule, a.Reason,
		string(a.Status), store.Decider(a.By, a.ByKey), a.Comment, Nanos(a.CreatedAt), Nanos(a.DecidedAt), Nanos(a.ExpiresAt), a.UsedBy}
}

// DecideApprovalArgs are the arguments of Queries.DecideApproval.
func DecideApprovalArgs(id string, status store.ApprovalStatus, by, comment string, at int64) []any {
	return []any{string(status), by, comment, at, id}
}

// scanApproval reads one approval row into a; store.ErrNotFound when
// there is none.
func (r Reads) scanApproval(row Row, a *store.Approval) error {
	c := r.cols
	err := row.Scan(&a.ID, &a.Tool, &a.ArgsHash, c.JSON(&a.Args), &a.PrincipalID, &a.RunID, &a.ConfigVersion,
		&a.Rule, &a.Reason, &a.Status, &a.By, &a.Comment, c.Time(&a.CreatedAt), c.Time(&a.DecidedAt),
		c.Time(&a.ExpiresAt), &a.UsedBy)
	if r.db.NoRows(err) {
		return store.ErrNotFound
	}
	if err != nil {
		return err
	}
	a.By, a.ByKey = store.SplitDecider(a.By)
	return nil
}

// GetApproval returns one approval, or store.ErrNotFound.
func (r Reads) GetApproval(ctx context.Context, id string) (*store.Approval, error) {
	return r.oneApproval(ctx, "get approval", r.q.selectApproval, id)
}

// FindApproval returns the newest approval with the binding, or
// store.ErrNotFound.
func (r Reads) FindApproval(ctx context.Context, b store.Binding) (*store.Approval, error) {
	return r.oneApproval(ctx, "find approval", r.q.findApproval, b.Tool, b.ArgsHash, b.PrincipalID, b.ConfigVersion, b.RunID)
}

// oneApproval runs the read op (query, args) of one approval.
func (r Reads) oneApproval(ctx context.Context, op, query string, args ...any) (*store.Approval, error) {
	if r.db.Closed() {
		return nil, errClosed
	}
	var a store.Approval
	err := r.scanApproval(r.db.QueryRow(ctx, query, args...), &a)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, err
	case err != nil:
		return nil, r.db.ReadErr(op, err)
	}
	return &a, nil
}

// Decided is the answer of DecideApproval once its UPDATE changed n rows:
// the approval as it is now, read through r, with store.ErrApprovalDecided
// when the UPDATE found it decided or expired. It is a function, not a
// method, so that a store embedding Reads does not export it.
func Decided(ctx context.Context, r Reads, id string, n int64) (*store.Approval, error) {
	a, err := r.GetApproval(ctx, id)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return a, store.ErrApprovalDecided
	}
	return a, nil
}

// ListApprovals returns approvals in status (every status when ""), newest
// first; a limit of 0 or less means 100.
func (r Reads) ListApprovals(ctx context.Context, status store.ApprovalStatus, limit int) ([]store.Approval, error) {
	args := []any{string(status), listLimit(limit)}
	return list(ctx, r, "list approvals", r.q.listApprovals, args, func(row Row, a *store.Approval) error {
		return r.scanApproval(row, a)
	})
}
