package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/internal/sqlq"
)

var _ store.ApprovalStore = (*Store)(nil)

// useApprovalSQL takes the approval and reads who has it in one statement.
const useApprovalSQL = `WITH taken AS (UPDATE approvals SET used_by = $2 WHERE id = $1 AND used_by = '' RETURNING used_by)
SELECT used_by FROM taken UNION ALL SELECT used_by FROM approvals WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM taken)`

// CreateApproval inserts a pending approval.
func (s *Store) CreateApproval(ctx context.Context, a *store.Approval) error {
	args := sqlq.PostgreSQL.ApprovalArgs(a)
	return s.write(ctx, "create approval", func(ctx context.Context, conn *pgxpool.Conn) error {
		_, err := conn.Exec(ctx, queries.InsertApproval, args...)
		return err
	})
}

// DecideApproval decides a pending, unexpired approval.
func (s *Store) DecideApproval(ctx context.Context, id string, status store.ApprovalStatus, by, comment string, at time.Time) (*store.Approval, error) {
	args := sqlq.DecideApprovalArgs(id, status, by, comment, nanos(at))
	n, err := s.update(ctx, "decide approval", queries.DecideApproval, args...)
	if err != nil {
		return nil, err
	}
	return sqlq.Decided(ctx, s.reads, id, n)
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
