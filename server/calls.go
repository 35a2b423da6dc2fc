package server

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/toolgate/toolgate/internal/tracectx"
	"github.com/toolgate/toolgate/types"
)

// MaxCallIDBytes bounds the call_id a client may send.
const MaxCallIDBytes = 256

// MaxToolNameBytes bounds the tool a call names: a configured tool's name
// is at most 64 characters, so a longer one is no tool, and is refused
// before it is recorded or echoed.
const MaxToolNameBytes = 128

// postCall is POST /v1/runs/{run}/calls: one tool call. A tool's failure
// is a 200 with ok false; only the gateway's own refusals are 4xx/5xx.
func (s *Server) postCall(w http.ResponseWriter, r *http.Request) {
	runID := r.PathValue("run")
	body, e := s.readBody(w, r)
	if e == nil {
		var call *types.Call
		if call, e = decodeCall(body, s.maxDepth); e == nil {
			call.RunID = runID
			e = s.call(w, r, call)
		} else {
			e.runID = clip(runID)
		}
	}
	if e != nil {
		s.writeError(w, r, e)
	}
}

func (s *Server) call(w http.ResponseWriter, r *http.Request, call *types.Call) *apiError {
	run, e := s.ownedRun(r, call.RunID)
	if e != nil {
		e.tool = clip(call.Tool)
		return e
	}
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	call.RunID = run.ID // the stored, scoped id
	s.extendWriteDeadline(w, call.Tool)
	// The call's span is the child of the caller's traceparent, if any.
	res, err := s.gw.DoRun(tracectx.FromHeader(r.Context(), r.Header), call, run)
	if err != nil {
		e := storeError(err)
		if e.code == types.CodeNotFound {
			e = noSuchRun(run.PublicID())
		}
		e.runID, e.tool = clip(run.PublicID()), clip(call.Tool)
		return e
	}
	res.Meta.RunID = run.PublicID()
	writeResult(w, res)
	return nil
}

// writeResult answers a call's envelope with 200, encoded as writeJSON
// would encode it, without reflection (types.Result.AppendJSON).
//
// A call the store could not admit (store_unavailable) is answered 503,
// with Retry-After: nothing was done, and the same call may be repeated.
func writeResult(w http.ResponseWriter, res *types.Result) {
	status := http.StatusOK
	if res.Code() == types.CodeStoreUnavailable {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", strconv.FormatInt(max(1, (res.Meta.RetryAfterMS+999)/1000), 10))
	}
	buf, err := res.AppendJSON(make([]byte, 0, 512+len(res.Data)+len(res.Observation)), false)
	if err != nil {
		writeJSON(w, status, res)
		return
	}
	writeEncoded(w, status, append(buf, '\n'))
}

// decodeCall reads the body of a call:
//
//	{"tool": "issue_refund", "args": {...}, "call_id": "toolu_1",
//	 "usage": {"input_tokens": 812, "output_tokens": 64}}
//
// tool is required; args must be a JSON object or null (absent means no
// arguments) and is kept byte for byte, so numbers stay exact.
func decodeCall(body []byte, maxDepth int) (*types.Call, *apiError) {
	ms, e := members(body, maxDepth)
	if e != nil {
		return nil, e
	}
	if e := strictFields(ms, "a call", "tool", "args", "call_id", "usage"); e != nil {
		return nil, e
	}
	call := &types.Call{}
	hasTool := false
	for _, m := range ms {
		switch m.name {
		case "tool":
			if call.Tool, e = stringField(m); e != nil {
				return nil, e
			}
			if len(call.Tool) > MaxToolNameBytes {
				return nil, badRequest(`"tool" is %d bytes long; no tool's name is longer than %d (see GET /v1/tools)`, len(call.Tool), MaxToolNameBytes)
			}
			hasTool = true
		case "args":
			if isNull(m.value) {
				continue
			}
			if kindOf(m.value) != "an object" {
				return nil, badRequest(`"args" must be a JSON object of named arguments (or null for none), got %s`, kindOf(m.value))
			}
			call.Args = bytes.TrimSpace(m.value)
		case "call_id":
			if isNull(m.value) {
				continue
			}
			if call.CallID, e = stringField(m); e != nil {
				return nil, e
			}
			if len(call.CallID) > MaxCallIDBytes {
				return nil, badRequest(`"call_id" is %d bytes long; the limit is %d`, len(call.CallID), MaxCallIDBytes)
			}
		case "usage":
			if isNull(m.value) {
				continue
			}
			if kindOf(m.value) != "an object" {
				return nil, badRequest(`"usage" must be an object {"input_tokens": n, "output_tokens": n}, got %s`, kindOf(m.value))
			}
			if call.Usage, e = decodeUsage(m.value, maxDepth); e != nil {
				return nil, e
			}
		}
	}
	if !hasTool || call.Tool == "" {
		return nil, badRequest(`"tool" is required: the name of the tool to call (see GET /v1/tools)`)
	}
	return call, nil
}

func decodeUsage(raw []byte, maxDepth int) (types.Usage, *apiError) {
	var u types.Usage
	ms, e := members(raw, maxDepth)
	if e != nil {
		return u, e
	}
	if e := strictFields(ms, `"usage"`, "input_tokens", "output_tokens"); e != nil {
		return u, e
	}
	for _, m := range ms {
		if isNull(m.value) {
			continue
		}
		n, e := countField(m)
		if e != nil {
			return u, e
		}
		if m.name == "input_tokens" {
			u.InputTokens = n
		} else {
			u.OutputTokens = n
		}
	}
	return u, nil
}
