package memory

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// errNoExecution is the answer to a Commit without its required Execution.
var errNoExecution = errors.New("memory: commit without an execution")

// Commit checks everything first and then writes the execution row, the
// operation update and the run's new version and state, so that a failed
// Commit changes nothing. The run is c.Execution.RunID; a missing run or
// operation is store.ErrNotFound. The run's UpdatedAt becomes the
// execution's FinishedAt (now when zero); a zero c.Operation.At is now.
func (s *Store) Commit(ctx context.Context, c *store.Commit) error {
	if err := checkCommit(c); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return err
	}
	run, op, err := s.commitTargets(c)
	if err != nil {
		return err
	}
	exec := c.Execution
	if c.TakeStep != nil {
		run.Step++
		exec.Step = run.Step
		exec.Result = c.TakeStep(run.Step)
	}
	pack := newPacker(commitSize(c, op != nil))
	s.advanceRun(run, c, &pack)
	if op != nil && c.Operation.Status == "" {
		delete(s.operations, c.Operation.Key)
		s.limits.release(c.Operation.Key)
		op = nil
	}
	if c.ReleaseWriter != "" {
		s.limits.releaseWriter(exec.RunID, c.ReleaseWriter)
	}
	if op != nil {
		s.updateOperation(op, c.Operation, &pack)
	}
	s.lastExecID++
	s.executions.append(exec, s.lastExecID, run.Version)
	exec.ID, exec.Version = s.lastExecID, run.Version
	return nil
}

// checkCommit rejects a commit that could never apply, before the lock: one
// without its Execution, or with an operation status Commit does not write.
func checkCommit(c *store.Commit) error {
	if c.Execution == nil {
		return errNoExecution
	}
	if u := c.Operation; u != nil && u.Status != "" && u.Status != types.OpStarted && u.Status != types.OpCompleted && u.Status != types.OpUnknown {
		return fmt.Errorf("memory: commit operation %q: invalid status %q", u.Key, u.Status)
	}
	return nil
}

// commitTargets finds the run and the operation (nil without
// c.Operation) that c writes, and checks the run's expected version and
// step budget, so that nothing is written when any of them fails. The
// caller holds s.mu.
func (s *Store) commitTargets(c *store.Commit) (*types.Run, *operation, error) {
	runID := c.Execution.RunID
	run, ok := s.runs[runID]
	if !ok {
		return nil, nil, fmt.Errorf("memory: commit to run %q: %w", runID, store.ErrNotFound)
	}
	if len(c.NewState) > 0 && run.Version != c.ExpectVersion {
		return nil, nil, fmt.Errorf("memory: commit to run %q at version %d, expected %d: %w",
			runID, run.Version, c.ExpectVersion, store.ErrVersionConflict)
	}
	var op *operation
	if c.Operation != nil {
		if op, ok = s.operations[c.Operation.Key]; !ok {
			return nil, nil, fmt.Errorf("memory: commit operation %q: %w", c.Operation.Key, store.ErrNotFound)
		}
	}
	if c.TakeStep != nil && run.OutOfSteps() {
		return nil, nil, fmt.Errorf("memory: commit to run %q (max %d steps): %w", runID, run.MaxSteps, store.ErrStepBudget)
	}
	return run, op, nil
}

// commitSize is the number of JSON bytes a commit keeps outside the log:
// the new state, and the operation's result when it has an operation.
func commitSize(c *store.Commit, hasOp bool) int {
	size := len(c.NewState)
	if hasOp {
		size += len(c.Operation.Result)
	}
	return size
}

// advanceRun moves the run to its next version, stamped with the
// execution's FinishedAt (now when zero), and sets its state when c has a
// new one. The caller holds s.mu.
func (s *Store) advanceRun(run *types.Run, c *store.Commit, pack *packer) {
	run.Version++
	run.UpdatedAt = c.Execution.FinishedAt
	if run.UpdatedAt.IsZero() {
		run.UpdatedAt = s.now()
	}
	if len(c.NewState) > 0 {
		run.State = pack.copy(c.NewState)
	}
}

// updateOperation writes u's status and result into op, stamped with u.At
// (now when zero); a completed operation also records when it completed.
// The caller holds s.mu.
func (s *Store) updateOperation(op *operation, u *store.OperationUpdate, pack *packer) {
	at := u.At
	if at.IsZero() {
		at = s.now()
	}
	op.Status = u.Status
	op.Result = pack.copy(u.Result)
	op.UpdatedAt = at
	if op.Status == types.OpCompleted {
		op.CompletedAt = at
	}
}

// ListExecutions returns copies of the rows f selects, newest first unless
// f.Ascending; a limit of 0 or less means 100.
func (s *Store) ListExecutions(ctx context.Context, f types.ExecutionFilter) ([]types.Execution, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = defaultListLimit
	}
	var since, until stamp
	if !f.Since.IsZero() {
		since = toStamp(f.Since)
	}
	if !f.Until.IsZero() {
		until = toStamp(f.Until)
	}
	log := &s.executions
	matches := func(row *execRow) bool {
		return (f.RunID == "" || log.equals(row, textRunID, f.RunID)) &&
			(f.Tool == "" || log.equals(row, textTool, f.Tool)) &&
			(f.Code == "" || log.equals(row, textCode, string(f.Code))) &&
			(f.Owner == "" || s.runOwnedBy(log.str(row, textRunID), f.Owner)) &&
			(f.Since.IsZero() || !row.finished.before(since)) &&
			(f.Until.IsZero() || row.finished.before(until))
	}
	// The log is in id order: the cursors bound the slice scanned.
	lo, hi := 0, log.len()
	if f.AfterID > 0 {
		lo = sort.Search(hi, func(i int) bool { return log.at(i).id > f.AfterID })
	}
	if f.BeforeID > 0 {
		hi = sort.Search(hi, func(i int) bool { return log.at(i).id >= f.BeforeID })
	}
	var out []types.Execution
	for i := 0; i < hi-lo && len(out) < limit; i++ {
		idx := hi - 1 - i
		if f.Ascending {
			idx = lo + i
		}
		if row := log.at(idx); matches(row) {
			out = append(out, log.execution(row))
		}
	}
	return out, nil
}

// Prune deletes executions that finished before cutoff and completed
// operations last updated before cutoff.
func (s *Store) Prune(ctx context.Context, cutoff time.Time) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return 0, err
	}
	before := s.executions.len()
	limit := toStamp(cutoff)
	s.executions = s.executions.filter(func(row *execRow) bool { return !row.finished.before(limit) })
	deleted := int64(before - s.executions.len())
	for key, rec := range s.operations {
		if rec.Status == types.OpCompleted && rec.UpdatedAt.Before(cutoff) {
			delete(s.operations, key)
			deleted++
		}
	}
	deleted += s.pruneStats(cutoff)
	return deleted, nil
}

// runOwnedBy reports whether the run exists and owner is its Owner. The
// caller holds s.mu.
func (s *Store) runOwnedBy(runID, owner string) bool {
	run, ok := s.runs[runID]
	return ok && run.Owner == owner
}
