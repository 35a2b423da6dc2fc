// Package feedback is stage 5 of the pipeline: it writes the observation, the
// one text the model reads before its next decision, and the
// machine-readable advice beside it (meta.next, meta.retry_after_ms,
// meta.verify_with, meta.omitted).
//
// Every observation follows three rules: say what happened, specifically
// (codes, counts, ids, amounts); say what to do next; say what was left out.
package feedback

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/types"
)

// Facts are what the pipeline knows beyond the envelope itself.
type Facts struct {
	// Effect of the tool ("" when the tool is unknown).
	Effect types.Effect
	// Dependency is the service the tool talks to ("" for Go tools).
	Dependency string
	// ReadTimeout is the tool's read timeout, for timeout wording.
	ReadTimeout time.Duration
	// VerifyWith names the read tool that can settle an unknown outcome.
	VerifyWith string
	// ReadTools names the read tools that take the same arguments as this
	// write, for the model to check an unknown outcome with when no verify
	// read is configured (VerifyWith empty).
	ReadTools []string
	// RetryAfter is when the model may try again (wait advice).
	RetryAfter time.Duration
	// Status is the dependency's HTTP status, when it answered.
	Status int
	// CompletedAt is when a replayed operation first completed.
	CompletedAt time.Time
	// Verified says a verify read settled an unknown outcome.
	Verified bool
	// Note is an extra sentence appended to the observation (e.g. a state
	// update that could not be applied).
	Note string
	// MaxBytes bounds the observation text; 0 means 4096.
	MaxBytes int
	// RuleNext overrides the advice for a rule refusal.
	RuleNext types.Next
	// Answer is the tool's answer that did not match its output_schema
	// (code invalid_output): shown in the observation, since it is not the
	// result's data.
	Answer []byte
	// Permanent says the dependency's failure will recur on a repeat of
	// the same call (a redirect, a status it does not use for passing
	// trouble, an answer too large): retrying is no advice.
	Permanent bool
	// TooLarge says the dependency's answer was larger than toolgate takes.
	TooLarge bool
	// DataDepth, when set, is how deep the answer's JSON was nested, past
	// the limit: data carries it as a string (meta.omitted.depth).
	DataDepth int
	// Doubt, on a success, is why its answer may not be the whole effect:
	// a write sent again under an operation key its dependency is said to
	// honour, whose verify read shows another result. The advice is then
	// escalate.
	Doubt string
	// Unrecorded says the call's outcome could not be recorded (toolgate's
	// store did not answer): an unknown_outcome for that reason, not a
	// verify's.
	Unrecorded bool
}

// Annotate fills in res.Observation and the advice fields of res.Meta.
func Annotate(res *types.Result, f *Facts) {
	if f.MaxBytes <= 0 {
		f.MaxBytes = 4096
	}
	m := &res.Meta
	m.Next, m.RetryAfterMS, m.VerifyWith = advice(res, f)
	var b strings.Builder
	if res.OK {
		success(&b, res, f)
	} else {
		failure(&b, res, f)
	}
	if res.OK && f.Doubt != "" {
		b.WriteString(" ")
		b.WriteString(f.Doubt)
		b.WriteString(" Do not repeat this call; escalate so that a person checks what was done.")
	}
	if f.Note != "" {
		b.WriteString(" ")
		b.WriteString(f.Note)
	}
	res.Observation = b.String()
}

// advice is what the model should do next after res, how long to wait
// first (in milliseconds) and the read tool to check with, by the result's
// code and the facts of the call.
func advice(res *types.Result, f *Facts) (types.Next, int64, string) {
	switch res.Code() {
	case types.CodeOK:
		if f.Doubt != "" {
			return types.NextEscalate, 0, ""
		}
		return types.NextContinue, 0, ""
	case types.CodeUnknownTool, types.CodeMissingArguments, types.CodeUnknownArguments,
		types.CodeWrongType, types.CodeInvalidArgument:
		return types.NextFixArgs, 0, ""
	case types.CodeForbidden, types.CodeInternalError, types.CodeInvalidOutput:
		return types.NextEscalate, 0, ""
	case types.CodeNotOwner, types.CodeIdempotencyConflict, types.CodeStepBudgetExhausted, types.CodeApprovalDenied:
		return types.NextStop, 0, ""
	case types.CodeConnectFailed, types.CodeConnectTimeout, types.CodeUpstreamError, types.CodeTimeout:
		return upstreamAdvice(res, f)
	case types.CodeRateLimited, types.CodeCircuitOpen, types.CodeDuplicateInFlight, types.CodeApprovalRequired:
		return types.NextWait, waitMS(f.RetryAfter), ""
	case types.CodeRunBusy:
		return types.NextWait, waitMS(f.RetryAfter), ""
	case types.CodeStoreUnavailable:
		return types.NextWait, waitMS(max(f.RetryAfter, time.Second)), ""
	case types.CodeQuotaExceeded:
		if f.RetryAfter > 0 {
			return types.NextWait, waitMS(f.RetryAfter), ""
		}
		return types.NextEscalate, 0, ""
	case types.CodeTimeoutUnknownOutcome, types.CodeUnknownOutcome:
		return types.NextVerify, waitMS(f.RetryAfter), f.VerifyWith
	case types.CodeRejected:
		switch {
		case f.Status == 401 || f.Status == 403:
			return types.NextEscalate, 0, ""
		case f.Status == 409:
			return types.NextStop, 0, ""
		}
		return types.NextFixArgs, 0, ""
	}
	// A rule refusal: its message names the alternative.
	if f.RuleNext != "" {
		return f.RuleNext, 0, ""
	}
	return types.NextUseOtherTool, 0, ""
}

// upstreamAdvice is advice after the service failed or did not answer
// (see adviseUpstreamFailure for its text): verify a delivered write that
// may have happened, ask for less, escalate a permanent failure, else wait
// as the service asked or retry.
func upstreamAdvice(res *types.Result, f *Facts) (types.Next, int64, string) {
	if res.Meta.SideEffect == types.SideEffectUnknown && f.Effect == types.EffectWrite {
		return types.NextVerify, 0, f.VerifyWith
	}
	switch {
	case f.TooLarge:
		return types.NextFixArgs, 0, ""
	case f.Permanent:
		return types.NextEscalate, 0, ""
	}
	if f.RetryAfter > 0 {
		return types.NextWait, waitMS(f.RetryAfter), ""
	}
	return types.NextRetry, 0, ""
}

// waitMS is a wait in milliseconds; none given (0 or less) is a second.
func waitMS(d time.Duration) int64 {
	if d <= 0 {
		return 1000
	}
	return d.Milliseconds()
}

// success writes the text of a call that succeeded: what happened (done
// now, replayed, or found by a verify read), then the result, within the
// tool's observation budget, and what was left out of it.
func success(b *strings.Builder, res *types.Result, f *Facts) {
	successLead(b, res, f)
	max := f.MaxBytes - b.Len() - 200
	b.WriteString(" Result: ")
	omitted := writeResult(b, res, max)
	if f.DataDepth > 0 {
		fmt.Fprintf(b, " (The answer was JSON nested %d levels deep, past toolgate's limit: data carries its text as a string.)", f.DataDepth)
		if omitted == nil {
			omitted = &types.Omitted{}
		}
		omitted.Depth = f.DataDepth
	}
	if omitted != nil {
		res.Meta.Omitted = omitted
		noteOmitted(b, omitted)
	}
}

// successLead writes the first sentence of a success: a replay of a stored
// result, an unclear answer a verify read confirmed, or the common case,
// with its attempts and time.
func successLead(b *strings.Builder, res *types.Result, f *Facts) {
	m := &res.Meta
	switch {
	case m.Replayed:
		when := ""
		if !f.CompletedAt.IsZero() {
			when = " at " + f.CompletedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(b, "%s was already done%s (operation %s); nothing was sent again. This is the stored result.", m.Tool, when, m.IdempotencyKey)
	case f.Verified:
		fmt.Fprintf(b, "%s did not give a clear answer, but a check with %s found that %s did happen; nothing was sent twice.", orTool(f.Dependency, m.Tool), f.VerifyWith, m.Tool)
	default:
		// The common case, written without fmt: it runs on every call.
		b.Grow(len(m.Tool) + len(f.Dependency) + len(res.Data) + 64)
		b.WriteString(m.Tool)
		b.WriteString(" succeeded")
		if f.Dependency != "" {
			b.WriteString(" on ")
			b.WriteString(f.Dependency)
		}
		b.WriteString(" (")
		writePlural(b, m.Attempts, "attempt")
		b.WriteString(", ")
		b.WriteString(strconv.FormatInt(m.ElapsedMS, 10))
		b.WriteString(" ms).")
	}
}

// writeResult writes the result's data in at most about max bytes (the
// data as it is when compact and short enough, else shortened by Render)
// and a description of any content beside it, or the description alone
// when the data is null. It returns what Render left out, nil when
// nothing.
func writeResult(b *strings.Builder, res *types.Result, max int) *types.Omitted {
	var omitted *types.Omitted
	desc := ""
	if len(res.Content) > 0 {
		desc = DescribeContent(res.Content)
		max -= len(desc)
	}
	if desc != "" && string(res.Data) == "null" {
		b.WriteString(desc)
		b.WriteString(".")
		desc = ""
	} else if len(res.Data) <= max && compact(res.Data) {
		b.Write(res.Data)
	} else {
		var text string
		text, omitted = Render(res.Data, max)
		b.WriteString(text)
	}
	if desc != "" {
		b.WriteString(" Content beside it: ")
		b.WriteString(desc)
		b.WriteString(".")
	}
	return omitted
}

// noteOmitted tells the model what the result's text left out: list items
// (and how to see others) or bytes; nothing when it left out neither (an
// answer nested too deep, shown whole as text: success says so).
func noteOmitted(b *strings.Builder, omitted *types.Omitted) {
	switch {
	case omitted.Total > 0:
		name := omitted.Field
		if name == "" {
			name = "items"
		}
		fmt.Fprintf(b, " (showing %d of %d %s; the rest were left out of this text. Narrow the query to see others.)", omitted.Shown, omitted.Total, name)
	case omitted.TotalBytes > 0:
		fmt.Fprintf(b, " (showing %d of %d bytes; the rest was cut. Ask for a narrower result if you need it.)", omitted.ShownBytes, omitted.TotalBytes)
	}
}

// failure writes the text of a call that failed: the error, then by its
// code what the model should do next, and whether the call had already
// been carried out.
func failure(b *strings.Builder, res *types.Result, f *Facts) {
	m := &res.Meta
	e := res.Error
	fmt.Fprintf(b, "%s failed (%s): %s", orTool(m.Tool, "the call"), e.Code, strings.TrimSpace(e.Message))
	if !strings.HasSuffix(b.String(), ".") {
		b.WriteString(".")
	}
	dep := orTool(f.Dependency, "the service")
	switch e.Code {
	case types.CodeTimeoutUnknownOutcome:
		fmt.Fprintf(b, " The request reached %s but no answer came back: it MAY have been carried out.", dep)
		if f.VerifyWith != "" {
			fmt.Fprintf(b, " Do not repeat it as a new action. Check with %s; repeating this exact call is safe: toolgate will verify before sending anything.", f.VerifyWith)
		} else {
			verifyFirst(b, f)
		}
	case types.CodeUnknownOutcome:
		adviseUnknownOutcome(b, f)
	case types.CodeCircuitOpen, types.CodeRateLimited:
		fmt.Fprintf(b, " Nothing was done. Wait %s before trying %s again, or use another approach or escalate.", seconds(f.RetryAfter), dep)
	case types.CodeDuplicateInFlight:
		fmt.Fprintf(b, " The same operation is running right now; wait %s and repeat this exact call to get its result. Do not change the arguments.", seconds(f.RetryAfter))
	case types.CodeRunBusy:
		fmt.Fprintf(b, " Nothing was done: another call of this run that reads or changes the run's state was still running. Wait %s and repeat this exact call; it will be judged against the state that call leaves.", seconds(f.RetryAfter))
	case types.CodeStoreUnavailable:
		fmt.Fprintf(b, " Nothing was done and nothing was sent: toolgate's own database did not answer in time. Wait %s and repeat this exact call; it is safe to repeat.", seconds(max(f.RetryAfter, time.Second)))
	case types.CodeQuotaExceeded:
		if f.RetryAfter > 0 {
			fmt.Fprintf(b, " Nothing was done. Wait %s and repeat the call, or escalate if it cannot wait.", seconds(f.RetryAfter))
		} else {
			b.WriteString(" Nothing was done, and waiting will not help: escalate to a person.")
		}
	case types.CodeConnectFailed, types.CodeConnectTimeout, types.CodeUpstreamError, types.CodeTimeout:
		adviseUpstreamFailure(b, m, f)
	case types.CodeRejected:
		fmt.Fprintf(b, " %s refused it and nothing was done; repeating the same call will get the same answer.", dep)
	case types.CodeIdempotencyConflict:
		b.WriteString(" Nothing was sent.")
	case types.CodeInvalidOutput:
		invalidOutput(b, res, f)
		return
	case types.CodeApprovalRequired:
		fmt.Fprintf(b, " A person must approve it first (approval %s). Wait, then repeat this exact call once it is approved.", m.ApprovalID)
	}
	if m.SideEffect == types.SideEffectCommitted {
		b.WriteString(" (It had been carried out.)")
	}
}

// adviseUnknownOutcome writes what to do after an unknown outcome: wait
// for toolgate's database to record it, wait and let toolgate's verify
// read check again, or (with no verify read) escalate.
func adviseUnknownOutcome(b *strings.Builder, f *Facts) {
	switch {
	case f.Unrecorded:
		b.WriteString(" The action MAY have been carried out, but toolgate's database did not answer, so it is not recorded yet (it will be once the database is back). Do not repeat it as a new action; repeating this exact call is safe: toolgate will check before sending anything.")
	case f.VerifyWith != "":
		fmt.Fprintf(b, " A check with %s did not find it yet, so it may still be processing. Wait %s and repeat this exact call: toolgate will check again before sending anything. If it still is not found, escalate; do not issue it as a new action.", f.VerifyWith, seconds(f.RetryAfter))
	default:
		b.WriteString(" No verify read is configured for this tool, so toolgate will not send it again. Escalate to a person to check.")
	}
}

// adviseUpstreamFailure writes what to do after the service failed or did
// not answer: check first when a delivered write may have happened, ask
// for less or escalate when repeating cannot help, else try again.
func adviseUpstreamFailure(b *strings.Builder, m *types.Meta, f *Facts) {
	switch {
	case m.SideEffect == types.SideEffectUnknown && f.Effect == types.EffectWrite:
		b.WriteString(" The request was delivered, so it MAY have been carried out.")
		if f.VerifyWith != "" {
			fmt.Fprintf(b, " Do not repeat it as a new action; check with %s first.", f.VerifyWith)
		} else {
			verifyFirst(b, f)
		}
	case f.TooLarge:
		b.WriteString(" Repeating the same call will get the same answer: ask for less (a narrower query, a smaller page), or escalate.")
	case f.Permanent:
		b.WriteString(" Repeating the same call will get the same answer; this needs a person: escalate.")
	case m.SideEffect == types.SideEffectNone && f.Effect == types.EffectWrite:
		fmt.Fprintf(b, " Nothing was done (%s). It is safe to try again later.", plural(m.Attempts, "attempt"))
	default:
		fmt.Fprintf(b, " It is safe to try again (%s made).", plural(m.Attempts, "attempt"))
	}
}

// verifyFirst tells the model, for a write that may have happened and has no
// verify read, not to retry it and to check with a read first, naming the
// read tools that take the same arguments when there are some.
func verifyFirst(b *strings.Builder, f *Facts) {
	b.WriteString(" Do not retry this write: sending it again could carry it out twice. Verify with a read first whether it happened")
	switch len(f.ReadTools) {
	case 0:
		b.WriteString(", using a read tool that can show it.")
	case 1:
		fmt.Fprintf(b, ": %s takes the same arguments.", f.ReadTools[0])
	default:
		fmt.Fprintf(b, ": %s and %s take the same arguments.", strings.Join(f.ReadTools[:len(f.ReadTools)-1], ", "), f.ReadTools[len(f.ReadTools)-1])
	}
	b.WriteString(" If the read cannot tell, escalate to a person.")
}

// invalidOutput explains an answer that broke the tool's output_schema:
// what was done, the answer as received, and to escalate.
func invalidOutput(b *strings.Builder, res *types.Result, f *Facts) {
	if res.Meta.SideEffect == types.SideEffectCommitted {
		b.WriteString(" The action WAS carried out; do not repeat it.")
	} else {
		b.WriteString(" Nothing was changed.")
	}
	b.WriteString(" The answer is not given as data because it does not have the declared shape; repeating the call will not fix that: escalate so the tool's output_schema or the service is corrected.")
	if len(f.Answer) > 0 {
		text, _ := Render(f.Answer, max(f.MaxBytes-b.Len()-40, 64))
		b.WriteString(" Answer as received: ")
		b.WriteString(text)
	}
}

func orTool(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

func plural(n int, word string) string {
	var b strings.Builder
	writePlural(&b, n, word)
	return b.String()
}

// writePlural writes "1 attempt" or "3 attempts".
func writePlural(b *strings.Builder, n int, word string) {
	b.WriteString(strconv.Itoa(n))
	b.WriteByte(' ')
	b.WriteString(word)
	if n != 1 {
		b.WriteByte('s')
	}
}

// seconds is a wait in human units: exact below a minute ("1 second",
// "12 seconds"), then "about" a whole number of minutes, hours or days,
// rounded up so that a model that waits that long is not early. The exact
// wait is meta.retry_after_ms.
func seconds(d time.Duration) string {
	if d <= 0 {
		d = time.Second
	}
	ceil := func(unit time.Duration) int { return int((d + unit - 1) / unit) }
	switch {
	case d <= time.Minute:
		return plural(ceil(time.Second), "second")
	case d <= time.Hour:
		return "about " + plural(ceil(time.Minute), "minute")
	case d <= 48*time.Hour:
		return "about " + plural(ceil(time.Hour), "hour")
	}
	return "about " + plural(ceil(24*time.Hour), "day")
}
