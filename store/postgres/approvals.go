package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/store"
)

var _ store.ApprovalStore = (*Store)(nil)

const (
	approvalColumns = `id, tool, args_hash, args, principal_id, run_id, config_version, rule, reason, status,
decided_by, comment, created_at, decided_at, expires_at, used_by`
	insertApprovalSQL = `INSERT INTO approvals (` + approvalColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`
	selectApprovalSQL = `SELECT ` + approvalColumns + ` FROM approvals WHERE id = $1`
	findApprovalSQL   = `SELECT ` + approvalColumns + ` FROM approvals
WHERE tool = $1 AND args_hash = $2 AND principal_id = $3 AND config_version = $4 AND run_id = $5 ORDER BY created_at DESC, id DESC LIMIT 1`
	decideApprovalSQL = `UPDATE approvals SET status = $1, decided_by = $2, comment = $3, decided_at = $4
WHERE id = $5 AND status = 'pending' AND expires_at > $4`
	useApprovalSQL = `WITH taken AS (UPDATE approvals SET used_by = $2 WHERE id = $1 AND used_by = '' RETURNING used_by)
SELECT used_by FROM taken UNION ALL SELECT used_by FROM approvals WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM taken)`
	listApprovalsSQL = `SELECT ` + approvalColumns + ` FROM approvals WHERE ($1 = '' OR status = $1) ORDER BY created_at DESC, id DESC LIMIT $2`
)

func scanApproval(row pgx.Row) (*store.Approval, error) {
	var a store.Approval
	var created, decided, expires int64
	err := row.Scan(&a.ID, &a.Tool, &a.ArgsHash, jsonDest(&a.Args), &a.PrincipalID, &a.RunID, &a.ConfigVersion,
		&a.Rule, &a.Reason, &a.Status, &a.By, &a.Comment, &created, &decided, &expires, &a.UsedBy)
	a.By, a.ByKey = store.SplitDecider(a.By)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	a.CreatedAt, a.DecidedAt, a.ExpiresAt = fromNanos(created), fromNanos(decided), fromNanos(expires)
	return &a, nil
}

// CreateApproval inserts a pending approval.
func (s *Store) CreateApproval(ctx context.Context, a *store.Approval) error {
	args := []any{a.ID, a.Tool, a.ArgsHash, jsonArg(a.Args), a.PrincipalID, a.RunID, a.ConfigVersion, a.Rule, a.Reason,
		string(a.Status), store.Decider(a.By, a.ByKey), a.Comment, nanos(a.CreatedAt), nanos(a.DecidedAt), nanos(a.ExpiresAt), a.UsedBy}
	return s.write(ctx, "create approval", func(ctx context.Context, conn *pgxpool.Conn) error {
		_, err := conn.Exec(ctx, insertApprovalSQL, args...)
		return err
	})
}

// GetApproval returns one approval.
func (s *Store) GetApproval(ctx context.Context, id string) (*store.Approval, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	a, err := scanApproval(s.pool.QueryRow(ctx, selectApprovalSQL, id))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, s.readErr("get approval", err)
	}
	return a, err
}

// FindApproval returns the newest approval with the binding.
func (s *Store) FindApproval(ctx context.Context, b store.Binding) (*store.Approval, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	a, err := scanApproval(s.pool.QueryRow(ctx, findApprovalSQL, b.Tool, b.ArgsHash, b.PrincipalID, b.ConfigVersion, b.RunID))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, s.readErr("find approval", err)
	}
	return a, err
}

// DecideApproval decides a pending, unexpired approval.
func (s *Store) DecideApproval(ctx context.Context, id string, status store.ApprovalStatus, by, comment string, at time.Time) (*store.Approval, error) {
	n, err := s.update(ctx, "decide approval", decideApprovalSQL, string(status), by, comment, nanos(at), id)
	if err != nil {
		return nil, err
	}
	a, err := s.GetApproval(ctx, id)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return a, store.ErrApprovalDecided
	}
	return a, nil
}

// UseApproval binds an approval to an operation, once: the UPDATE's row
// lock decides between replicas.
func (s *Store) UseApproval(ctx context.Context, id, opKey string) (bool, error) {
	var usedBy string
	err := s.write(ctx, "use approval", func(ctx context.Context, conn *pgxpool.Conn) error {
		return conn.QueryRow(ctx, useApprovalSQL, id, opKey).Scan(&usedBy)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, store.ErrNotFound
	}
	if err != nil {
		return false, err
	}
	return usedBy == opKey, nil
}

// ListApprovals returns approvals, newest first.
func (s *Store) ListApprovals(ctx context.Context, status store.ApprovalStatus, limit int) ([]store.Approval, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	if limit <= 0 {
		limit = defaultListLimit
	}
	rows, err := s.pool.Query(ctx, listApprovalsSQL, string(status), limit)
	if err != nil {
		return nil, s.readErr("list approvals", err)
	}
	defer rows.Close()
	var out []store.Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, s.readErr("list approvals", err)
		}
		out = append(out, *a)
	}
	return out, s.readErr("list approvals", rows.Err())
}
