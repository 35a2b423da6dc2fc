package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// RunDocument is a run as the API shows it: POST /v1/runs answers it
// (with an empty history), GET /v1/runs/{run} with the whole history.
type RunDocument struct {
	RunID     string          `json:"run_id"`
	Principal types.Principal `json:"principal"`
	// Step counts the calls admitted so far.
	Step int64 `json:"step"`
	// MaxSteps bounds the calls of the run (0: no bound).
	MaxSteps int64           `json:"max_steps,omitempty"`
	State    json.RawMessage `json:"state"`
	// InitialState is the state the run was opened with: with each step's
	// state_patch, what every step changed (the console shows it as a diff).
	InitialState json.RawMessage `json:"initial_state"`
	CreatedAt    time.Time       `json:"created_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
	// History is the run's execution rows in commit order.
	History []HistoryEntry `json:"history"`
	// Approvals are the approval requests the run's calls raised, oldest
	// first, with who decided them (absent when the store keeps none).
	Approvals []ApprovalDocument `json:"approvals,omitzero"`
}

// HistoryEntry is one call of a run's history.
type HistoryEntry struct {
	Step       int64            `json:"step"`
	CallID     string           `json:"call_id"`
	Tool       string           `json:"tool"`
	Args       json.RawMessage  `json:"args"`
	Code       types.Code       `json:"code"`
	OK         bool             `json:"ok"`
	SideEffect types.SideEffect `json:"side_effect"`
	Replayed   bool             `json:"replayed"`
	Verified   bool             `json:"verified"`
	Attempts   int              `json:"attempts"`
	LatencyMS  float64          `json:"latency_ms"`
	StartedAt  time.Time        `json:"started_at"`
	// FinishedAt is when the call ended: with StartedAt, the step's place
	// on the run's time axis.
	FinishedAt  time.Time `json:"finished_at"`
	Dependency  string    `json:"dependency,omitempty"`
	TraceID     string    `json:"trace_id,omitempty"`
	Observation string    `json:"observation"`
	// SettledBy, on a call whose side effect was unknown, is the step of
	// the later call of the same operation that settled it (its verify
	// read, or the dependency's answer to the re-send); absent while
	// nothing has.
	SettledBy int64 `json:"settled_by,omitempty"`
	// Settles is the steps whose unknown outcome this call settled.
	Settles []int64 `json:"settles,omitempty"`
	// StatePatch is the state keys the call set (null when it set none).
	StatePatch json.RawMessage `json:"state_patch"`
}

// NewRunDocument builds the document of a run and its execution rows (in
// commit order).
func NewRunDocument(run *types.Run, rows []types.Execution) *RunDocument {
	doc := &RunDocument{
		RunID: run.PublicID(), Principal: run.Principal, Step: run.Step, MaxSteps: run.MaxSteps,
		State: run.State, CreatedAt: run.CreatedAt, UpdatedAt: run.UpdatedAt,
		History: make([]HistoryEntry, 0, len(rows)),
	}
	if len(doc.State) == 0 {
		doc.State = json.RawMessage("{}")
	}
	doc.InitialState = run.InitialState
	if len(doc.InitialState) == 0 {
		doc.InitialState = json.RawMessage("{}")
	}
	for i := range rows {
		doc.History = append(doc.History, newHistoryEntry(&rows[i]))
	}
	linkSettlements(doc.History, rows)
	return doc
}

func newHistoryEntry(row *types.Execution) HistoryEntry {
	var stored struct {
		Observation string `json:"observation"`
	}
	_ = json.Unmarshal(row.Result, &stored)
	h := HistoryEntry{
		Step: row.Step, CallID: row.CallID, Tool: row.Tool, Args: row.Args, Code: row.Code, OK: row.OK,
		SideEffect: row.SideEffect, Replayed: row.Replayed, Verified: row.Verified, Attempts: row.Attempts,
		LatencyMS: row.LatencyMS, StartedAt: row.StartedAt, FinishedAt: row.FinishedAt, Dependency: row.Dependency,
		TraceID: row.TraceID, Observation: stored.Observation, StatePatch: row.StatePatch,
	}
	if len(h.StatePatch) == 0 {
		h.StatePatch = nil
	}
	return h
}

// runIDPattern keeps run ids safe in a URL path and a log line.
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// createRun is POST /v1/runs.
func (s *Server) createRun(w http.ResponseWriter, r *http.Request) {
	body, e := s.readBody(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	opts, e := decodeRun(body, s.maxDepth)
	if e == nil {
		e = s.principalOf(r, opts)
	}
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	// StartRun stores the run under an id scoped to its key
	// (types.ScopedRunID): another key's run of the same id is another
	// run, and its existence is not revealed.
	opts.Owner = KeyName(r.Context())
	if opts.ID == "" {
		opts.ID = toolgate.NewRunID()
	}
	public := opts.ID
	run, err := s.gw.StartRun(r.Context(), *opts)
	if errors.Is(err, store.ErrRunExists) {
		s.writeError(w, r, &apiError{status: http.StatusConflict, code: types.CodeRunExists, runID: public,
			message: fmt.Sprintf("a run with the id %q already exists", public)})
		return
	}
	if err != nil {
		s.writeError(w, r, storeError(err))
		return
	}
	w.Header().Set("Location", "/v1/runs/"+url.PathEscape(run.PublicID()))
	writeJSON(w, http.StatusCreated, NewRunDocument(run, nil))
}

// decodeRun reads the body of POST /v1/runs:
//
//	{"run_id": "r1", "principal": {"id": "cust_42", "permissions": [...],
//	 "limits": {...}, "attrs": {...}}, "state": {...}, "max_steps": 20}
func decodeRun(body []byte, maxDepth int) (*toolgate.RunOptions, *apiError) {
	ms, e := members(body, maxDepth)
	if e != nil {
		return nil, e
	}
	if e := strictFields(ms, "a run", "run_id", "principal", "state", "max_steps"); e != nil {
		return nil, e
	}
	opts := &toolgate.RunOptions{}
	for _, m := range ms {
		if isNull(m.value) {
			continue
		}
		switch m.name {
		case "run_id":
			if opts.ID, e = stringField(m); e != nil {
				return nil, e
			}
			if !runIDPattern.MatchString(opts.ID) {
				return nil, badRequest(`"run_id" %q is not a valid run id: use 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit (or leave it out for a fresh one)`, clip(opts.ID))
			}
		case "principal":
			p, err := types.ParsePrincipal(m.value)
			if err != nil {
				return nil, badRequest("%v", err)
			}
			opts.Principal = p
		case "state":
			if kindOf(m.value) != "an object" {
				return nil, badRequest(`"state" must be a JSON object (the run's initial state), got %s`, kindOf(m.value))
			}
			st, err := state.Canonicalize(m.value)
			if err != nil {
				return nil, badRequest(`"state" is not a valid state document: %v`, err)
			}
			opts.State = st
		case "max_steps":
			if opts.MaxSteps, e = countField(m); e != nil {
				return nil, e
			}
		}
	}
	return opts, nil
}

// principalOf settles the principal of a new run: a key that pins one
// (auth.keys[].principal) opens runs for it alone, never wider; any other
// caller must name one.
func (s *Server) principalOf(r *http.Request, opts *toolgate.RunOptions) *apiError {
	var asked *types.Principal
	if opts.Principal.ID != "" {
		asked = &opts.Principal
	}
	pinned := s.pinned[KeyName(r.Context())]
	if pinned == nil {
		if asked == nil {
			return badRequest(`"principal" is required: who the run acts for, e.g. {"id": "cust_42", "permissions": ["refunds:write"]}`)
		}
		return nil
	}
	p, e := withinPinned(pinned, asked)
	if e != nil {
		return e
	}
	opts.Principal = p
	return nil
}

// ownedRun returns the run when it exists and the caller's key owns it;
// any other run is "not found", so that keys cannot probe each other's runs.
// id is the run id the key knows (or the scoped, stored one); a run the
// key created before run ids were scoped is found by its bare id.
func (s *Server) ownedRun(r *http.Request, id string) (*types.Run, *apiError) {
	scoped := types.ScopedRunID(KeyName(r.Context()), id)
	run, err := s.gw.GetRun(r.Context(), scoped)
	if errors.Is(err, toolgate.ErrUnknownRun) && scoped != id {
		run, err = s.gw.GetRun(r.Context(), id)
	}
	if errors.Is(err, toolgate.ErrUnknownRun) {
		return nil, noSuchRun(id)
	}
	if err != nil {
		e := storeError(err)
		e.runID = clip(id)
		return nil, e
	}
	if !s.owns(r.Context(), run.Owner) {
		return nil, noSuchRun(id)
	}
	return run, nil
}

// getRun is GET /v1/runs/{run}: the run with its history (?key=: another
// key's run, viewedRun).
func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("run")
	key, e := runQueryKey(r)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	run, e := s.viewedRun(r, id, key)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	rows, err := s.gw.History(r.Context(), run.ID)
	if err != nil {
		s.writeError(w, r, storeError(err))
		return
	}
	doc := NewRunDocument(run, rows)
	doc.Approvals = s.runApprovals(r, run.ID)
	writeJSON(w, http.StatusOK, doc)
}

// replay is GET /v1/runs/{run}/replay: the state rebuilt from the log
// alone, and whether it matches the stored state (?key= as getRun).
func (s *Server) replay(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("run")
	key, e := runQueryKey(r)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	run, e := s.viewedRun(r, id, key)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	rep, err := s.gw.Replay(r.Context(), run.ID)
	if err != nil {
		s.writeError(w, r, storeError(err))
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
