package types

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/internal/jsontext"
)

// AppendJSON appends the result's JSON encoding to b: the same bytes as
// json.Marshal(r) when escapeHTML is true, and as a json.Encoder with
// SetEscapeHTML(false) writes (without its newline) when false. It uses no
// reflection: every call's envelope is encoded at least twice (its
// execution row, the answer), so this is on the hot path;
// TestAppendJSONMatchesMarshal holds it to encoding/json's output. The
// error is encoding/json's for Data that is not valid JSON.
func (r *Result) AppendJSON(b []byte, escapeHTML bool) ([]byte, error) {
	e := jsonEncoder{html: escapeHTML}
	return e.result(b, r)
}

// AppendJSONStepAt is AppendJSON that also returns the offset, in the
// returned slice, of the first digit of meta.step: a store that numbers the
// step when it commits the row can put the number there without encoding
// the envelope again.
func (r *Result) AppendJSONStepAt(b []byte, escapeHTML bool) ([]byte, int, error) {
	e := jsonEncoder{html: escapeHTML, stepAt: -1}
	b, err := e.result(b, r)
	return b, e.stepAt, err
}

// jsonEncoder carries the one option of the encoding, and where the step
// went when asked (stepAt >= 0).
type jsonEncoder struct {
	html   bool
	stepAt int
}

func (enc *jsonEncoder) result(b []byte, r *Result) ([]byte, error) {
	b = append(b, `{"ok":`...)
	b = strconv.AppendBool(b, r.OK)
	b = append(b, `,"data":`...)
	var err error
	if b, err = enc.raw(b, r.Data); err != nil {
		return b, err
	}
	if len(r.Content) > 0 {
		b = append(b, `,"content":`...)
		if b, err = enc.raw(b, r.Content); err != nil {
			return b, err
		}
	}
	b = append(b, `,"error":`...)
	if e := r.Error; e == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"code":`...)
		b = enc.str(b, string(e.Code))
		b = append(b, `,"message":`...)
		b = enc.str(b, e.Message)
		b = append(b, `,"retryable":`...)
		b = strconv.AppendBool(b, e.Retryable)
		b = append(b, '}')
	}
	b = append(b, `,"meta":`...)
	b = enc.meta(b, &r.Meta, &enc.stepAt)
	b = append(b, `,"observation":`...)
	b = enc.str(b, r.Observation)
	return append(b, '}'), nil
}

func (enc jsonEncoder) meta(b []byte, m *Meta, stepAt *int) []byte {
	b = append(b, `{"run_id":`...)
	b = enc.str(b, m.RunID)
	b = append(b, `,"step":`...)
	*stepAt = len(b)
	b = strconv.AppendInt(b, m.Step, 10)
	b = append(b, `,"tool":`...)
	b = enc.str(b, m.Tool)
	b = append(b, `,"call_id":`...)
	b = enc.str(b, m.CallID)
	if m.Dependency != "" {
		b = append(b, `,"dependency":`...)
		b = enc.str(b, m.Dependency)
	}
	b = append(b, `,"attempts":`...)
	b = strconv.AppendInt(b, int64(m.Attempts), 10)
	b = append(b, `,"elapsed_ms":`...)
	b = strconv.AppendInt(b, m.ElapsedMS, 10)
	b = append(b, `,"idempotency_key":`...)
	b = enc.str(b, m.IdempotencyKey)
	b = append(b, `,"replayed":`...)
	b = strconv.AppendBool(b, m.Replayed)
	b = append(b, `,"verified":`...)
	b = strconv.AppendBool(b, m.Verified)
	b = append(b, `,"side_effect":`...)
	b = enc.str(b, string(m.SideEffect))
	b = append(b, `,"next":`...)
	b = enc.str(b, string(m.Next))
	if m.RetryAfterMS != 0 {
		b = append(b, `,"retry_after_ms":`...)
		b = strconv.AppendInt(b, m.RetryAfterMS, 10)
	}
	if m.VerifyWith != "" {
		b = append(b, `,"verify_with":`...)
		b = enc.str(b, m.VerifyWith)
	}
	if m.ApprovalID != "" {
		b = append(b, `,"approval_id":`...)
		b = enc.str(b, m.ApprovalID)
	}
	if m.CompletedAt != nil {
		b = append(b, `,"completed_at":`...)
		b = appendTime(b, *m.CompletedAt)
	}
	b = append(b, `,"omitted":`...)
	if o := m.Omitted; o == nil {
		b = append(b, "null"...)
	} else {
		b = enc.omitted(b, o)
	}
	return append(b, '}')
}

func (enc jsonEncoder) omitted(b []byte, o *Omitted) []byte {
	b = append(b, '{')
	sep := func() {
		if b[len(b)-1] != '{' {
			b = append(b, ',')
		}
	}
	for _, f := range [...]struct {
		name string
		v    int
	}{{"shown", o.Shown}, {"total", o.Total}, {"shown_bytes", o.ShownBytes}, {"total_bytes", o.TotalBytes}, {"depth", o.Depth}} {
		if f.v != 0 {
			sep()
			b = append(b, '"')
			b = append(b, f.name...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, int64(f.v), 10)
		}
	}
	if o.Field != "" {
		sep()
		b = append(b, `"field":`...)
		b = enc.str(b, o.Field)
	}
	return append(b, '}')
}

// appendTime writes t as time.Time.MarshalJSON does; a time it cannot
// write (a year outside 0-9999) goes through it for its error text.
func appendTime(b []byte, t time.Time) []byte {
	if y := t.Year(); y < 0 || y > 9999 {
		enc, _ := json.Marshal(t)
		return append(b, enc...)
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// raw writes raw JSON as encoding/json writes a json.RawMessage: null
// when nil, else compacted (with <, >, & and U+2028/U+2029 escaped when
// escaping HTML). Raw JSON that needs none of that (the usual case) is
// copied as it is.
func (enc jsonEncoder) raw(b []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(b, "null"...), nil
	}
	if jsontext.Compacted(raw, enc.html) && jsontext.Valid(raw) {
		return append(b, raw...), nil
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(enc.html)
	if err := e.Encode(raw); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// str writes s as a JSON string the way encoding/json does: invalid UTF-8
// as \ufffd, U+2028 and U+2029 escaped, and <, > and & as \u00XX when
// escaping HTML.
func (enc jsonEncoder) str(b []byte, s string) []byte {
	return jsontext.AppendString(b, s, jsontext.EncodingJSON(enc.html))
}
