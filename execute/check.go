package execute

import "errors"

// RequestChecker is an Executor that can tell, before anything is sent and
// before the circuit breaker is asked, that an attempt's request cannot be
// built. The pipeline asks it first, so that a call toolgate cannot send is
// answered as the caller's problem (invalid_argument) or toolgate's
// (internal_error), and never counts against the dependency.
type RequestChecker interface {
	// CheckRequest returns the failure of an attempt whose request cannot
	// be built, or nil.
	CheckRequest(a *Attempt) *Failure
}

var (
	_ RequestChecker = Router{}
	_ RequestChecker = (*HTTP)(nil)
)

// CheckRequest checks HTTP tools (a tool with a request and an HTTP
// executor); any other kind of tool passes.
func (r Router) CheckRequest(a *Attempt) *Failure {
	if a == nil || a.Tool == nil || a.Tool.Func != nil || a.Tool.Request == nil || r.HTTP == nil {
		return nil
	}
	return r.HTTP.CheckRequest(a)
}

// CheckRequest checks what the arguments do to the attempt's request, the
// path and the operation key's header, without building the rest of it
// (the body, the URL), which Do builds once: a request that fails there is
// toolgate's own problem (internal_error), never a dependency failure
// either.
func (h *HTTP) CheckRequest(a *Attempt) *Failure {
	if a.Tool == nil || a.Tool.Request == nil || a.Dependency == nil {
		return nil // Do says what is missing
	}
	if isPlaced(a) {
		// An imported operation's request is cheap to build whole: every
		// argument it places is checked.
		_, _, fail := h.build(a)
		return fail
	}
	_, err := expandPath(a.Tool.Request.Path, a.Args, false)
	if err == nil {
		if e := checkOperationKeyHeader(a); e != nil {
			err = e
		}
	}
	if err == nil {
		return nil
	}
	var argErr *ArgumentError
	if errors.As(err, &argErr) {
		return argumentFailure(a, argErr)
	}
	return invalidRequest(a, err.Error())
}

// build is buildFor with its error classified: an argument's fault is
// invalid_argument, anything else internal_error. The headers are those
// placed arguments of an imported operation set.
func (h *HTTP) build(a *Attempt) (builtRequest, []header, *Failure) {
	built, headers, err := buildFor(a)
	if err == nil {
		return built, headers, nil
	}
	var argErr *ArgumentError
	if errors.As(err, &argErr) {
		return builtRequest{}, nil, argumentFailure(a, argErr)
	}
	return builtRequest{}, nil, invalidRequest(a, err.Error())
}
