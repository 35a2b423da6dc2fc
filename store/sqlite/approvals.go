package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/internal/sqlq"
)

var _ store.ApprovalStore = (*Store)(nil)

const (
	useApprovalSQL    = `UPDATE approvals SET used_by = ? WHERE id = ? AND used_by = ''`
	approvalUsedBySQL = `SELECT used_by FROM approvals WHERE id = ?`
)

// CreateApproval inserts a pending approval.
func (s *Store) CreateApproval(ctx context.Context, a *store.Approval) error {
	args := sqlq.SQLite.ApprovalArgs(a)
	err := s.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
		_, err := tx.exec(ctx, queries.InsertApproval, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: create approval: %w", err)
	}
	return nil
}

// DecideApproval decides a pending, unexpired approval.
func (s *Store) DecideApproval(ctx context.Context, id string, status store.ApprovalStatus, by, comment string, at time.Time) (*store.Approval, error) {
	args := sqlq.DecideApprovalArgs(id, status, by, comment, nanos(at))
	n, err := s.update(ctx, queries.DecideApproval, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: decide approval: %w", err)
	}
	return sqlq.Decided(ctx, s.reads, id, n)
}

// UseApproval binds an approval to an operation, once: the single writer
// orders the UPDATE and the SELECT of concurrent uses.
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
