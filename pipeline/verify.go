package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/toolgate/toolgate/monitor"
	"github.com/toolgate/toolgate/types"
)

// unsettled is what a failed call's answer res means for its write's
// operation: unknown (settled by the verify read when there is one) when
// the write may have been carried out, by this call's attempts or by the
// one it re-sent (resent); otherwise nothing happened, and the intent is
// forgotten so that the operation may run again.
func (p *Pipeline) unsettled(ctx context.Context, f *flight, res *types.Result, resent bool) *types.Result {
	if res.Code() == types.CodeTimeoutUnknownOutcome || (f.delivered && f.spec.Effect == types.EffectWrite && res.Code() == types.CodeUpstreamError) {
		return p.unknownOutcome(ctx, f, res)
	}
	if f.spec.Effect == types.EffectWrite && (resent || f.resent) {
		return p.stillUnknown(ctx, f, res)
	}
	if f.spec.Effect == types.EffectWrite {
		f.settle("")
	}
	return res
}

// unknownOutcome handles this call's own write whose outcome is unknown:
// never re-sent blindly; settled by the verify read when there is one.
func (p *Pipeline) unknownOutcome(ctx context.Context, f *flight, res *types.Result) *types.Result {
	if f.spec.Verify == nil {
		f.settle(types.OpUnknown)
		return res
	}
	return p.settleByVerify(ctx, f, res.Error.Message)
}

// stillUnknown answers a write whose last attempt sent nothing (a refused
// connection, an open breaker) after an earlier attempt that may have
// acted: one of this call's, or the one that left the operation unknown
// before this call re-sent it under its key. Nothing proves the operation
// did not happen, so it stays unknown (it is never forgotten, which would
// let it run again and leave an effect no ledger knows).
func (p *Pipeline) stillUnknown(ctx context.Context, f *flight, res *types.Result) *types.Result {
	f.delivered = true
	msg := fmt.Sprintf("an earlier attempt of operation %s may have been carried out, and sending it again failed before it reached %s (%s: %s)",
		f.key, f.spec.Dependency, res.Code(), res.Error.Message)
	return p.unknownOutcome(ctx, f, types.Fail(types.CodeUnknownOutcome, msg, types.Meta{}))
}

// verifyUnknown handles a repeat of an operation whose outcome is unknown:
// verify before anything else.
func (p *Pipeline) verifyUnknown(ctx context.Context, f *flight, op *types.Operation) *types.Result {
	f.delivered = true
	if f.spec.Verify == nil {
		return types.Fail(types.CodeUnknownOutcome, fmt.Sprintf("an earlier attempt of operation %s may or may not have been carried out, and toolgate will not send it again without a verify read", op.Key), types.Meta{})
	}
	return p.settleByVerify(ctx, f, fmt.Sprintf("an earlier attempt of operation %s ended without a clear answer", op.Key))
}

func (p *Pipeline) settleByVerify(ctx context.Context, f *flight, what string) *types.Result {
	found, data, why := p.verify(ctx, f)
	if f.fence != nil && !p.fencer.Holds(*f.fence) {
		// The claim may be another process's by now: settle nothing.
		return types.Fail(types.CodeUnknownOutcome, what+"; toolgate lost its connection to the shared database while checking, so it settled nothing. Repeat the call to check again.", types.Meta{})
	}
	if found {
		f.settle(types.OpCompleted)
		res := types.OK(data, types.Meta{Verified: true})
		return res
	}
	f.settle(types.OpUnknown)
	f.wait = f.spec.Timeout.Read.D()
	if why != "" {
		what += "; " + why
	}
	return types.Fail(types.CodeUnknownOutcome, what, types.Meta{})
}

// verify runs the tool's verify read within the call's deadline
// (validate.Validator.Verify): found reports whether the write is seen to
// have happened.
func (p *Pipeline) verify(ctx context.Context, f *flight) (found bool, data json.RawMessage, why string) {
	return f.cfg.validator.Verify(ctx, f.checked, reader{p: p, cfg: f.cfg, deadline: f.deadline, purpose: monitor.PurposeVerify})
}

// checkResent is the check of a write that was sent again under its
// honoured operation key after an attempt that may have acted: before its
// answer is reported committed, the tool's verify read (when it has one)
// must show the same effect. A provider that claims to honour the key but
// made a second refund answers the re-send with the second one, while the
// read shows the first: the call stays ok (the write was done), but the
// model is told it may have been done twice and to escalate (f.doubt), and
// the log says so at warn level.
//
// A read that cannot be made changes nothing: the answer stands, as it did
// before this check, and the log says why it could not be checked.
func (p *Pipeline) checkResent(ctx context.Context, f *flight, answer json.RawMessage) {
	if f.spec.Effect != types.EffectWrite || !f.keyHonoured() || f.spec.Verify == nil {
		return
	}
	found, read, why := p.verify(ctx, f)
	lookup := f.spec.Verify.Lookup
	switch {
	case why != "":
		p.log.Warn("a re-sent write could not be checked with its verify read", "tool", f.spec.Name, "run", f.run.ID,
			"key", f.key, "dependency", f.spec.Dependency, "why", why)
		return
	case !found:
		f.doubt = fmt.Sprintf("But a check with %s does not show it, although %s answered that it was done after the request was sent again.",
			lookup, orName(f.spec.Dependency, f.spec.Name))
	case !sameEffect(answer, read):
		shown := "another result"
		if len(read) <= 300 {
			shown = string(read)
		}
		f.doubt = fmt.Sprintf("But a check with %s shows %s, not this answer: %s may have carried it out more than once although every attempt carried the same %s, so it may have been done twice.",
			lookup, shown, orName(f.spec.Dependency, f.spec.Name), f.spec.Idempotency.Header)
	default:
		return
	}
	p.log.Warn("a re-sent write's answer differs from its verify read: the dependency may not honour the idempotency key",
		"tool", f.spec.Name, "run", f.run.ID, "key", f.key, "dependency", f.spec.Dependency,
		"header", f.spec.Idempotency.Header, "answer", string(answer), "read", string(read), "found", found)
}

// sameEffect reports whether a write's answer and its verify read show the
// same effect: equal values, or, for two objects, equal values under every
// name they both have (an answer may say more than a list's item).
func sameEffect(answer, read json.RawMessage) bool {
	a, errA := decodeNumbers(answer)
	r, errR := decodeNumbers(read)
	if errA != nil || errR != nil {
		return bytes.Equal(bytes.TrimSpace(answer), bytes.TrimSpace(read))
	}
	am, okA := a.(map[string]any)
	rm, okR := r.(map[string]any)
	if !okA || !okR {
		return reflect.DeepEqual(a, r)
	}
	for k, v := range am {
		if w, ok := rm[k]; ok && !reflect.DeepEqual(v, w) {
			return false
		}
	}
	return true
}

func decodeNumbers(b json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func orName(dependency, tool string) string {
	if dependency != "" {
		return dependency
	}
	return tool
}
