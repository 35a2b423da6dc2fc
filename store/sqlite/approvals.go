package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/store"
)

var _ store.ApprovalStore = (*Store)(nil)

const (
	approvalColumns = `id, tool, args_hash, args, principal_id, run_id, config_version, rule, reason, status,
decided_by, comment, created_at, decided_at, expires_at, used_by`
	insertApprovalSQL = `INSERT INTO approvals (` + approvalColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	selectApprovalSQL = `SELECT ` + approvalColumns + ` FROM approvals WHERE id = ?`
	findApprovalSQL   = `SELECT ` + approvalColumns + ` FROM approvals
WHERE tool = ? AND args_hash = ? AND principal_id = ? AND config_version = ? AND run_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`
	decideApprovalSQL = `UPDATE approvals SET status = ?, decided_by = ?, comment = ?, decided_at = ?
WHERE id = ? AND status = 'pending' AND expires_at > ?`
	useApprovalSQL    = `UPDATE approvals SET used_by = ? WHERE id = ? AND used_by = ''`
	listApprovalsSQL  = `SELECT ` + approvalColumns + ` FROM approvals WHERE (? = '' OR status = ?) ORDER BY created_at DESC, id DESC LIMIT ?`
	approvalUsedBySQL = `SELECT used_by FROM approvals WHERE id = ?`
)

func scanApproval(row interface{ Scan(...any) error }) (*store.Approval, error) {
	var a store.Approval
	err := row.Scan(&a.ID, &a.Tool, &a.ArgsHash, jsonColumn{&a.Args}, &a.PrincipalID, &a.RunID, &a.ConfigVersion,
		&a.Rule, &a.Reason, &a.Status, &a.By, &a.Comment, timeColumn{&a.CreatedAt}, timeColumn{&a.DecidedAt},
		timeColumn{&a.ExpiresAt}, &a.UsedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	a.By, a.ByKey = store.SplitDecider(a.By)
	return &a, nil
}

// CreateApproval inserts a pending approval.
func (s *Store) CreateApproval(ctx context.Context, a *store.Approval) error {
	args := []any{a.ID, a.Tool, a.ArgsHash, jsonText(a.Args), a.PrincipalID, a.RunID, a.ConfigVersion, a.Rule, a.Reason,
		string(a.Status), store.Decider(a.By, a.ByKey), a.Comment, nanos(a.CreatedAt), nanos(a.DecidedAt), nanos(a.ExpiresAt), a.UsedBy}
	err := s.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
		_, err := tx.exec(ctx, insertApprovalSQL, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: create approval: %w", err)
	}
	return nil
}

// GetApproval returns one approval.
func (s *Store) GetApproval(ctx context.Context, id string) (*store.Approval, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	a, err := scanApproval(s.queryRow(ctx, selectApprovalSQL, id))
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
	a, err := scanApproval(s.queryRow(ctx, findApprovalSQL, b.Tool, b.ArgsHash, b.PrincipalID, b.ConfigVersion, b.RunID))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, s.readErr("find approval", err)
	}
	return a, err
}

// DecideApproval decides a pending, unexpired approval.
func (s *Store) DecideApproval(ctx context.Context, id string, status store.ApprovalStatus, by, comment string, at time.Time) (*store.Approval, error) {
	var n int64
	err := s.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
		var err error
		n, err = tx.affected(ctx, decideApprovalSQL, string(status), by, comment, nanos(at), id, nanos(at))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: decide approval: %w", err)
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

// UseApproval binds an approval to an operation, once.
func (s *Store) UseApproval(ctx context.Context, id, opKey string) (bool, error) {
	var usedBy string
	err := s.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
		if _, err := tx.exec(ctx, useApprovalSQL, opKey, id); err != nil {
			return err
		}
		return tx.queryRow(ctx, approvalUsedBySQL, []any{id}, &usedBy)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return false, store.ErrNotFound
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: use approval: %w", err)
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
	rows, err := s.query(ctx, listApprovalsSQL, string(status), string(status), limit)
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
