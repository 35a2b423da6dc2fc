package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// ApprovalDocument is an approval request as the API shows it.
type ApprovalDocument struct {
	store.Approval
	// Expired is true once the request can no longer be decided or used.
	Expired bool `json:"expired"`
}

func (s *Server) approvalDoc(a *store.Approval) ApprovalDocument {
	return ApprovalDocument{Approval: *a, Expired: !s.gw.Now().Before(a.ExpiresAt)}
}

// sees reports whether the caller may see an approval: approvers see all,
// an agent host's key the approvals of its own runs for tools it may call.
func (s *Server) sees(r *http.Request, a *store.Approval) bool {
	if s.approver(r.Context()) {
		return true
	}
	if !s.catalogue(r.Context()).Has(a.Tool) {
		return false
	}
	run, err := s.gw.GetRun(r.Context(), a.RunID)
	return err == nil && s.owns(r.Context(), run.Owner)
}

// listApprovals is GET /v1/approvals?status=pending|approved|denied|all&limit=.
func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if e := strictQuery(q, "status", "limit"); e != nil {
		s.writeError(w, r, e)
		return
	}
	status := store.ApprovalStatus(q.Get("status"))
	switch status {
	case "", store.ApprovalPending, store.ApprovalApproved, store.ApprovalDenied:
	case "all":
		status = ""
	default:
		s.writeError(w, r, badRequest("status %q is not one of pending, approved, denied, all", clip(string(status))))
		return
	}
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			s.writeError(w, r, badRequest("limit must be a whole number from 1 to 1000, got %q", clip(v)))
			return
		}
		limit = n
	}
	list, err := s.gw.Approvals(r.Context(), status, limit)
	if err != nil {
		s.writeError(w, r, storeError(err))
		return
	}
	out := []ApprovalDocument{}
	for i := range list {
		if s.sees(r, &list[i]) {
			out = append(out, s.approvalDoc(&list[i]))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": out})
}

func (s *Server) findApproval(w http.ResponseWriter, r *http.Request) (*store.Approval, bool) {
	id := r.PathValue("id")
	a, err := s.gw.Approval(r.Context(), id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.writeError(w, r, notFound("no approval %q", clip(id)))
		return nil, false
	case err != nil:
		s.writeError(w, r, storeError(err))
		return nil, false
	}
	if !s.sees(r, a) {
		s.writeError(w, r, notFound("no approval %q", clip(id)))
		return nil, false
	}
	return a, true
}

// getApproval is GET /v1/approvals/{id}.
func (s *Server) getApproval(w http.ResponseWriter, r *http.Request) {
	if a, ok := s.findApproval(w, r); ok {
		writeJSON(w, http.StatusOK, s.approvalDoc(a))
	}
}

// decideApproval is POST /v1/approvals/{id} {"decision": "approve"|"deny",
// "by": "...", "comment"?: "..."}. Only an approver key may decide.
func (s *Server) decideApproval(w http.ResponseWriter, r *http.Request) {
	body, e := s.readBody(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	d, e := parseDecision(body, s.maxDepth)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	a, ok := s.findApproval(w, r)
	if !ok {
		return
	}
	if !s.approver(r.Context()) {
		s.writeError(w, r, &apiError{status: http.StatusForbidden, code: types.CodeForbidden,
			message: "this key may not decide approvals; use a key marked approver: true (a person's key, never an agent's)"})
		return
	}
	decided, err := s.gw.DecideAs(r.Context(), a.ID, d.decision == "approve", d.by, KeyName(r.Context()), d.comment)
	if errors.Is(err, store.ErrApprovalDecided) {
		s.writeError(w, r, &apiError{status: http.StatusConflict, code: types.CodeBadRequest,
			message: fmt.Sprintf("approval %s is %s already or expired (expires %s); nothing changed", a.ID, decided.Status, decided.ExpiresAt.Format(time.RFC3339))})
		return
	}
	if err != nil {
		s.writeError(w, r, storeError(err))
		return
	}
	writeJSON(w, http.StatusOK, s.approvalDoc(decided))
}

// decisionBody is the body of POST /v1/approvals/{id}.
type decisionBody struct{ decision, by, comment string }

// parseDecision decodes and checks a decision's body: only its three
// string fields, a decision of approve or deny, and by naming a person in
// plain text.
func parseDecision(body []byte, maxDepth int) (decisionBody, *apiError) {
	var d decisionBody
	ms, e := members(body, maxDepth)
	if e == nil {
		e = strictFields(ms, "a decision", "decision", "by", "comment")
	}
	if e != nil {
		return d, e
	}
	for _, m := range ms {
		v, e := stringField(m)
		if e != nil {
			return d, e
		}
		switch m.name {
		case "decision":
			d.decision = v
		case "by":
			d.by = v
		case "comment":
			d.comment = v
		}
	}
	switch {
	case d.decision != "approve" && d.decision != "deny":
		return d, badRequest("decision must be \"approve\" or \"deny\", got %q", clip(d.decision))
	case d.by == "":
		return d, badRequest("by is required: a decision names the person who made it")
	case strings.ContainsFunc(d.by, unicode.IsControl):
		return d, badRequest("by must be plain text: it holds a control character")
	}
	return d, nil
}
