package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/feedback"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// runIDPattern is the HTTP API's: run ids stay safe in a URL path and a log
// line.
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// validRunID reports whether a run id in _meta is well formed: a run id, or
// one scoped to a key ("KEY/ID", the stored form, as the HTTP paths accept
// it). Whether the scope is the caller's key is runFor's business.
func validRunID(id string) bool {
	for part := range strings.SplitSeq(id, "/") {
		if !runIDPattern.MatchString(part) {
			return false
		}
	}
	return true
}

// StatelessRunID is the run of a key's stateless (2026-07-28) calls over
// HTTP that name none in _meta (with no Options.RunID): one run per key,
// stored like every run under the key's scope.
const StatelessRunID = "mcp_stateless"

// caller says who a call acts for: the key of its HTTP request, or the
// local caller on transports without one.
func (s *server) caller(req *mcp.CallToolRequest) (caller, error) {
	return s.callerOf(req.Extra)
}

// callerOf is caller for any request, by its extra.
func (s *server) callerOf(extra *mcp.RequestExtra) (caller, error) {
	req := struct{ Extra *mcp.RequestExtra }{extra}
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		if k, ok := s.keys.byName(req.Extra.TokenInfo.UserID); ok {
			return keyCaller(k), nil
		}
	}
	if len(s.keys) > 0 && req.Extra != nil && req.Extra.Header != nil {
		// An HTTP request that did not pass Handler's key check: only
		// possible when the SDK handler is mounted without it.
		return caller{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "toolgate: this request carries no valid bearer key"}
	}
	if s.local.refused != "" {
		return caller{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: s.local.refused}
	}
	return s.local, nil
}

// runFor returns the run a call goes to, creating it on first use: the
// call's own run id, else Options.RunID, else the session's (on HTTP
// without a session, the stateless revision: StatelessRunID). The run is
// stored under an id scoped to the caller's key (types.ScopedRunID), as
// the HTTP API does, so another key's run of the same id is another run
// and its existence is not revealed; a run the key created before run ids
// were scoped is found by its bare id.
func (s *server) runFor(ctx context.Context, ss *mcp.ServerSession, who caller, named string) (*types.Run, error) {
	id := named
	if strings.Contains(id, "/") { // scoped: only to the caller's own key
		if who.key == "" || !strings.HasPrefix(id, who.key+"/") || !runIDPattern.MatchString(id[len(who.key)+1:]) {
			return nil, invalidParams("run %q cannot be used with this key: name one of its own runs in _meta %q (a run id, or %q), or leave it out", id, MetaRunID, who.key+"/ID")
		}
		id = id[len(who.key)+1:]
	}
	if id == "" {
		id = s.opts.RunID
	}
	if id == "" && s.http && (ss == nil || ss.ID() == "") {
		id = StatelessRunID
	}
	if id == "" {
		id = s.sessionRun(ss)
	}
	scoped := types.ScopedRunID(who.key, id)
	run, err := s.gw.GetRun(ctx, scoped)
	if errors.Is(err, toolgate.ErrUnknownRun) && scoped != id {
		if legacy, lerr := s.gw.GetRun(ctx, id); lerr == nil && legacy.Owner == who.key {
			run, err = legacy, nil
		}
	}
	if errors.Is(err, toolgate.ErrUnknownRun) {
		run, err = s.gw.StartRun(ctx, toolgate.RunOptions{ID: id, Principal: who.principal, Owner: who.key})
		if errors.Is(err, store.ErrRunExists) { // a concurrent first call made it
			run, err = s.gw.GetRun(ctx, scoped)
		}
	}
	if storeBusy(err) {
		s.log.Warn("mcp: the store did not answer in time", "run", id, "error", err)
		return nil, errStoreBusy
	}
	if err != nil {
		return nil, s.internal("opening run "+id, err)
	}
	if len(s.keys) > 0 && run.Owner != who.key {
		return nil, invalidParams("run %q cannot be used with this key: name another run in _meta %q, or leave it out for the session's run", id, MetaRunID)
	}
	return run, nil
}

// sessionRun is the id of a session's own run: a hash of the session id
// (the id itself is a credential of sorts and stays out of run listings),
// or, for a session without an id (stdio), a random id kept for it.
func (s *server) sessionRun(ss *mcp.ServerSession) string {
	if ss != nil && ss.ID() != "" {
		sum := sha256.Sum256([]byte(ss.ID()))
		return "mcp_" + hex.EncodeToString(sum[:10])
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.anonRuns[ss]
	if !ok {
		id = "mcp_" + strings.ToLower(rand.Text()[:20])
		s.anonRuns[ss] = id
	}
	return id
}

// errStoreBusy is runFor's answer when the store did not answer in time
// (store.ErrUnavailable, or the call's deadline passed while reading or
// starting its run): do turns it into a tool result, as the pipeline
// answers a call it could not admit, so that the model reads "wait" rather
// than a protocol failure.
var errStoreBusy = errors.New("mcpserver: the store did not answer in time")

// storeBusy reports whether err says the store is slow or unreachable,
// rather than broken.
func storeBusy(err error) bool {
	return errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
}

// storeBusyResult is the envelope of a call refused because its run could
// not be read or started in time: nothing was done and nothing was sent,
// and the same call may be sent again. The code's advice and observation
// are the pipeline's own for store_unavailable (feedback).
func storeBusyResult(tool, runID string) *types.Result {
	res := types.Fail(types.CodeStoreUnavailable, "toolgate's database did not answer in time",
		types.Meta{RunID: runID, Tool: tool, SideEffect: types.SideEffectNone})
	feedback.Annotate(res, &feedback.Facts{})
	return res
}
