package server

import (
	"net/http"
	"slices"

	"github.com/toolgate/toolgate/types"
)

// maxRunApprovals bounds the approval requests read to find a run's.
const maxRunApprovals = 1000

// linkSettlements links each call whose side effect was unknown to the
// first later call of the same operation (the same operation key) whose
// side effect is known: the repeat whose verify read, or whose re-send
// under the key, settled it. history and rows are in the same order.
func linkSettlements(history []HistoryEntry, rows []types.Execution) {
	for i := range rows {
		if rows[i].SideEffect != types.SideEffectUnknown || rows[i].OperationKey == "" {
			continue
		}
		for j := i + 1; j < len(rows); j++ {
			if rows[j].OperationKey != rows[i].OperationKey || rows[j].SideEffect == types.SideEffectUnknown {
				continue
			}
			history[i].SettledBy = rows[j].Step
			history[j].Settles = append(history[j].Settles, rows[i].Step)
			break
		}
	}
}

// runApprovals are the approval requests raised by the run stored as runID,
// oldest first; nil when the store cannot list them
// (the run page then says so rather than failing).
func (s *Server) runApprovals(r *http.Request, runID string) []ApprovalDocument {
	list, err := s.gw.Approvals(r.Context(), "", maxRunApprovals)
	if err != nil {
		return nil
	}
	out := []ApprovalDocument{}
	for i := range list {
		if list[i].RunID == runID {
			out = append(out, s.approvalDoc(&list[i]))
		}
	}
	slices.SortFunc(out, func(a, b ApprovalDocument) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

// viewedRun is the run GET /v1/runs/{run}, its replay and GET
// /v1/executions?run= show: the
// caller's own run, or with key= the run of that key (an approver key's,
// a person's, may name any key; another key only itself). An approver key
// also sees runs that belong to no key (opened through the Go library).
func (s *Server) viewedRun(r *http.Request, id, key string) (*types.Run, *apiError) {
	if key == "" {
		run, e := s.ownedRun(r, id)
		if e != nil && e.status == http.StatusNotFound && s.approver(r.Context()) {
			if bare, err := s.gw.GetRun(r.Context(), id); err == nil && bare.Owner == "" {
				return bare, nil
			}
		}
		return run, e
	}
	if key != KeyName(r.Context()) && !s.approver(r.Context()) {
		return nil, &apiError{status: http.StatusForbidden, code: types.CodeForbidden,
			message: "key= shows another key's run, which only an approver key (a person's) may do"}
	}
	run, err := s.gw.GetRun(r.Context(), types.ScopedRunID(key, id))
	if err != nil || run.Owner != key {
		return nil, noSuchRun(id)
	}
	return run, nil
}

// runQueryKey reads the one query parameter GET /v1/runs/{run} and its
// replay take: key=.
func runQueryKey(r *http.Request) (string, *apiError) {
	q := r.URL.Query()
	if e := strictQuery(q, "key"); e != nil {
		return "", e
	}
	return q.Get("key"), nil
}
