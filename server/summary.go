package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/toolgate/toolgate/breaker"
	"github.com/toolgate/toolgate/monitor/stats"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// maxSummaryRows bounds the execution rows GET /v1/summary reads to count
// the effects committed in its window; past it the count is a lower bound
// (effects_committed_capped).
const maxSummaryRows = 10000

// maxSummaryListed bounds the unknown operations and pending approvals
// counted; past it the count is a lower bound.
const maxSummaryListed = 1000

// Summary is the answer of GET /v1/summary: the console's headline figures.
type Summary struct {
	// Window is the window the calls and effects were counted over.
	Window string `json:"window"`
	// Calls counts the calls that finished in the window.
	Calls int64 `json:"calls"`
	// EffectsCommitted counts the calls in the window that made a side
	// effect (a write or destructive call that committed, replays of an
	// earlier one not counted again).
	EffectsCommitted int64 `json:"effects_committed"`
	// Capped says the window held more than 10,000 calls: Calls and
	// EffectsCommitted count the newest 10,000.
	Capped bool `json:"capped"`
	// UnknownOutcomes counts the writes whose outcome is unknown, waiting
	// for a verify read or a repeat to settle them (whatever their age).
	UnknownOutcomes int `json:"unknown_outcomes"`
	// ApprovalsWaiting counts the approval requests waiting for a person
	// (-1 when the store could not list them).
	ApprovalsWaiting int `json:"approvals_waiting"`
	// BreakersOpen counts this replica's open circuit breakers.
	BreakersOpen int `json:"breakers_open"`
}

// summary is GET /v1/summary?window=1h: the headline figures of the
// console. An approver key (or development mode) counts every key's calls,
// unknown outcomes and approvals; another key those of its own runs.
func (s *Server) summary(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if e := strictQuery(q, "window"); e != nil {
		s.writeError(w, r, e)
		return
	}
	window := q.Get("window")
	if window == "" {
		window = "1h"
	}
	d, err := stats.ParseWindow(window)
	if err != nil {
		s.writeError(w, r, badRequest("window: %v", err))
		return
	}
	// An approver key (or development mode) counts every key's calls;
	// another key its own runs'.
	own := ""
	if !s.approver(r.Context()) {
		own = KeyName(r.Context())
	}
	out := &Summary{Window: stats.FormatWindow(d), ApprovalsWaiting: -1}
	if err := s.countCalls(r.Context(), out, s.gw.Now().Add(-d), own); err != nil {
		s.writeError(w, r, storeError(err))
		return
	}
	if err := s.countUnknownOutcomes(r.Context(), out, own); err != nil {
		s.writeError(w, r, storeError(err))
		return
	}
	s.countApprovalsWaiting(r, out)
	for _, b := range s.gw.Breakers() {
		if b.State == breaker.Open {
			out.BreakersOpen++
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// countCalls counts the calls since since (of the runs of the key own,
// when not "") and the effects they committed, reading at most
// maxSummaryRows rows, newest first; out.Capped says when it stopped there.
func (s *Server) countCalls(ctx context.Context, out *Summary, since time.Time, own string) error {
	f := types.ExecutionFilter{Since: since, Limit: 1000, Owner: own}
	for int(out.Calls) < maxSummaryRows {
		rows, err := s.gw.Store().ListExecutions(ctx, f)
		if err != nil {
			return err
		}
		for i := range rows {
			out.Calls++
			if rows[i].SideEffect == types.SideEffectCommitted && !rows[i].Replayed {
				out.EffectsCommitted++
			}
		}
		if len(rows) < f.Limit {
			break
		}
		f.BeforeID = rows[len(rows)-1].ID
	}
	out.Capped = int(out.Calls) >= maxSummaryRows
	return nil
}

// countUnknownOutcomes counts the operations whose outcome is unknown (of
// the runs of the key own, when not "), among the first
// maxSummaryListed.
func (s *Server) countUnknownOutcomes(ctx context.Context, out *Summary, own string) error {
	ops, err := s.gw.Store().ListOperations(ctx, types.OpUnknown, maxSummaryListed)
	if err != nil {
		return err
	}
	for i := range ops {
		if own == "" || strings.HasPrefix(ops[i].RunID, own+"/") {
			out.UnknownOutcomes++
		}
	}
	return nil
}

// countApprovalsWaiting counts the pending approvals, not yet expired,
// that the request's key sees; ApprovalsWaiting stays -1 when the store
// cannot list them.
func (s *Server) countApprovalsWaiting(r *http.Request, out *Summary) {
	list, err := s.gw.Approvals(r.Context(), store.ApprovalPending, maxSummaryListed)
	if err != nil {
		return
	}
	out.ApprovalsWaiting = 0
	for i := range list {
		if s.gw.Now().Before(list[i].ExpiresAt) && s.sees(r, &list[i]) {
			out.ApprovalsWaiting++
		}
	}
}
