package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// runQueryParams are the query parameters GET /v1/runs takes.
var runQueryParams = []string{"principal", "tool", "outcome", "q", "since", "key", "limit", "cursor"}

// RunList is the answer of GET /v1/runs.
type RunList struct {
	Runs []RunListEntry `json:"runs"`
	// NextCursor, on every page but the last, is the cursor= that asks for
	// the next page (older runs); absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// RunListEntry is one run of a list.
type RunListEntry struct {
	// RunID is the id the run's key gave it.
	RunID string `json:"run_id"`
	// Key is the name of the API key that owns the run (absent without
	// keys).
	Key         string    `json:"key,omitempty"`
	PrincipalID string    `json:"principal_id"`
	Step        int64     `json:"step"`
	MaxSteps    int64     `json:"max_steps,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	// LastTool and LastOutcome are the run's last call (absent before its
	// first).
	LastTool    string     `json:"last_tool,omitempty"`
	LastOutcome types.Code `json:"last_outcome,omitempty"`
}

// NewRunListEntry is the entry of a run summary.
func NewRunListEntry(r *store.RunSummary) RunListEntry {
	return RunListEntry{RunID: r.PublicID(), Key: r.Owner, PrincipalID: r.PrincipalID, Step: r.Step,
		MaxSteps: r.MaxSteps, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, LastTool: r.LastTool, LastOutcome: r.LastCode}
}

// ParseRunQuery turns the query of GET /v1/runs into a filter (the cursor
// aside): principal, tool, outcome (an outcome code), q (part of a run id
// or principal id), since (RFC 3339, or a duration back from now such as
// 24h), key (approver keys only: another key's runs) and limit (1 to
// MaxListLimit, default DefaultListLimit). It returns every problem it
// finds, each naming the parameter.
func ParseRunQuery(q url.Values, now time.Time) (store.RunFilter, error) {
	f := store.RunFilter{PrincipalID: q.Get("principal"), Tool: q.Get("tool"), Code: types.Code(q.Get("outcome")),
		Query: q.Get("q"), Owner: q.Get("key"), Limit: DefaultListLimit}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	f.Limit = parseLimit(q, bad)
	checkCode("outcome", f.Code, bad)
	if v := q.Get("since"); v != "" {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			f.Since = t
		} else if d, err := time.ParseDuration(v); err == nil && d > 0 {
			f.Since = now.Add(-d)
		} else {
			bad("since %q is neither an RFC 3339 time (2026-12-01T09:00:00Z) nor a duration back from now (24h)", clip(v))
		}
	}
	if len(problems) > 0 {
		return f, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return f, nil
}

// listRuns is GET /v1/runs: the caller's runs, newest first, a page at a
// time. An approver key (a person's) sees every key's runs, and may narrow
// them with key=; without keys every run is listed.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if e := strictQuery(q, runQueryParams...); e != nil {
		s.writeError(w, r, e)
		return
	}
	f, err := ParseRunQuery(q, time.Now())
	if err != nil {
		s.writeError(w, r, badRequest("%s", err))
		return
	}
	caller := KeyName(r.Context())
	if !s.approver(r.Context()) {
		if f.Owner != "" && f.Owner != caller {
			s.writeError(w, r, &apiError{status: http.StatusForbidden, code: types.CodeForbidden,
				message: "key= lists another key's runs, which only an approver key (a person's) may do"})
			return
		}
		f.Owner = caller
	}
	if c := q.Get("cursor"); c != "" {
		pos, e := s.openCursor(c, caller, q)
		if e != nil {
			s.writeError(w, r, e)
			return
		}
		f.After = pos
	}
	pageSize := f.Limit
	f.Limit++
	runs, err := s.gw.Store().ListRuns(r.Context(), f)
	if err != nil {
		s.writeError(w, r, storeError(err))
		return
	}
	list := &RunList{Runs: make([]RunListEntry, 0, min(len(runs), pageSize))}
	for i := range runs[:min(len(runs), pageSize)] {
		list.Runs = append(list.Runs, NewRunListEntry(&runs[i]))
	}
	if len(runs) > pageSize {
		list.NextCursor = s.sealCursor(runs[pageSize-1].Position(), caller, q)
	}
	writeJSON(w, http.StatusOK, list)
}

// cursorSecret signs the cursors of GET /v1/runs: derived from the
// server's keys, so that every replica with the same keys (and a restart)
// accepts its cursors, and nobody without a key's secret can forge one;
// random per process without keys.
func (s *Server) cursorSecret() []byte {
	if s.devMode() {
		return devCursorSecret[:]
	}
	h := sha256.New()
	h.Write([]byte("toolgate GET /v1/runs cursor\x00"))
	for _, k := range s.keys {
		h.Write(k.digest[:])
	}
	return h.Sum(nil)
}

// devCursorSecret signs cursors in development mode.
var devCursorSecret = func() (b [32]byte) { _, _ = rand.Read(b[:]); return b }()

// cursorScope is what a cursor is bound to besides its position: the key
// that was given it and the filters of its list.
func cursorScope(key string, q url.Values) string {
	var b strings.Builder
	b.WriteString(key)
	for _, name := range runQueryParams[:6] { // the filters, not limit or cursor
		b.WriteString("\x00" + q.Get(name))
	}
	return b.String()
}

// sealCursor is the next_cursor after the run at pos: the position,
// signed with the key and filters it is valid for.
func (s *Server) sealCursor(pos store.RunPosition, key string, q url.Values) string {
	body := strconv.FormatInt(pos.CreatedAt.UnixNano(), 10) + "." + base64.RawURLEncoding.EncodeToString([]byte(pos.ID))
	return body + "." + s.cursorMAC(body, key, q)
}

func (s *Server) cursorMAC(body, key string, q url.Values) string {
	m := hmac.New(sha256.New, s.cursorSecret())
	m.Write([]byte(body + "\x00" + cursorScope(key, q)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// openCursor checks a cursor's signature and returns its position.
func (s *Server) openCursor(c, key string, q url.Values) (*store.RunPosition, *apiError) {
	refuse := badRequest("cursor %q is not a next_cursor this key was given for these filters (edited, another key's, or from other filters); pass next_cursor as it came, with the same filters, or start again without cursor", clip(c))
	i := strings.LastIndexByte(c, '.')
	if i < 0 || !hmac.Equal([]byte(c[i+1:]), []byte(s.cursorMAC(c[:i], key, q))) {
		return nil, refuse
	}
	nanos, id, _ := strings.Cut(c[:i], ".")
	n, err := strconv.ParseInt(nanos, 10, 64)
	raw, err2 := base64.RawURLEncoding.DecodeString(id)
	if err != nil || err2 != nil {
		return nil, refuse
	}
	return &store.RunPosition{CreatedAt: time.Unix(0, n).UTC(), ID: string(raw)}, nil
}
