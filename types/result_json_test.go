package types

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestAppendJSONMatchesMarshal holds the hand-written encoder to
// encoding/json's bytes, field by field and for the strings and raw data
// encoding/json rewrites (HTML characters, U+2028, invalid UTF-8, control
// bytes, whitespace in data).
func TestAppendJSONMatchesMarshal(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 4, 5, 123456789, time.FixedZone("x", 3600))
	zero := time.Time{}
	odd := []string{"", "plain", `quo"te \ back`, "<b>&</b>", "tab\tnl\ncr\rbs\bff\f\x00\x1f\x7f",
		"é ü 日本", "line\u2028para\u2029", "bad \xff utf8 \xc3", "emoji 🦀"}
	results := []*Result{
		{},
		{OK: true, Data: json.RawMessage(`{"ok":1}`), Observation: "noop succeeded (1 attempt, 0 ms). Result: {\"ok\":1}",
			Meta: Meta{RunID: "r1", Step: 3, Tool: "noop", CallID: "c", Attempts: 1, Next: NextContinue, SideEffect: SideEffectNone}},
		{Data: json.RawMessage(`null`), Error: &Error{Code: CodeTimeout, Message: "slow <provider>", Retryable: true},
			Meta: Meta{Dependency: "payments", RetryAfterMS: 1500, VerifyWith: "list_refunds", ApprovalID: "ap_1",
				CompletedAt: &at, Omitted: &Omitted{Shown: 2, Total: 9, Field: "refunds"}, Replayed: true, Verified: true,
				IdempotencyKey: "refund:ORD-1:425000", ElapsedMS: -4, Step: -1}},
		{Meta: Meta{CompletedAt: &zero, Omitted: &Omitted{}}},
		{Meta: Meta{Omitted: &Omitted{ShownBytes: 10, TotalBytes: 20}}},
		{Meta: Meta{Omitted: &Omitted{ShownBytes: 10, TotalBytes: 20, Depth: 10000}}},
		{OK: true, Data: json.RawMessage(" { \"a\" : [1, 2,\n3], \"h\": \"<&>\" , \"u\":\"\u2028\"} ")},
		{OK: true, Data: json.RawMessage(`["x","\u003c",1e400,-0.0,true,false,null,{}]`)},
		{OK: true, Data: json.RawMessage(`"é"`)},
		{OK: true, Data: json.RawMessage(`{}`)},
		{OK: true, Data: json.RawMessage(`null`), Content: json.RawMessage(` [{"type":"image","data":"iVBO","mimeType":"image/png"}, {"type":"text","text":"<&>"}]`)},
	}
	for _, s := range odd {
		results = append(results, &Result{Observation: s, Error: &Error{Code: Code(s), Message: s},
			Meta: Meta{RunID: s, Tool: s, CallID: s, Dependency: s, IdempotencyKey: s, SideEffect: SideEffect(s),
				Next: Next(s), VerifyWith: s, ApprovalID: s, Omitted: &Omitted{Field: s}}})
	}
	for i, r := range results {
		for _, html := range []bool{true, false} {
			want, err := encode(r, html)
			if err != nil {
				t.Fatalf("%d: encoding/json: %v", i, err)
			}
			got, err := r.AppendJSON([]byte("prefix"), html)
			if err != nil {
				t.Fatalf("%d: AppendJSON: %v", i, err)
			}
			if !bytes.Equal(got[len("prefix"):], want) {
				t.Errorf("%d (escapeHTML %v):\n got %s\nwant %s", i, html, got[len("prefix"):], want)
			}
		}
	}

	// Invalid data fails as it does in encoding/json.
	bad := &Result{Data: json.RawMessage(`{"a":`)}
	if _, err := bad.AppendJSON(nil, true); err == nil {
		t.Error("AppendJSON of invalid data: no error")
	}
	if _, err := json.Marshal(bad); err == nil {
		t.Error("json.Marshal of invalid data: no error (the test's premise)")
	}
}

// FuzzAppendJSON compares the encoder with encoding/json on arbitrary text
// fields and data.
func FuzzAppendJSON(f *testing.F) {
	f.Add("r", "<t>", "obs \xff", []byte(`{"a":1}`), int64(7))
	f.Add("", "\u2028", "", []byte(" [1, \"&\"] "), int64(-1))
	f.Fuzz(func(t *testing.T, run, tool, obs string, data []byte, step int64) {
		r := &Result{OK: step%2 == 0, Data: data, Observation: obs, Error: &Error{Code: Code(tool), Message: obs},
			Meta: Meta{RunID: run, Tool: tool, Step: step, Dependency: run, Omitted: &Omitted{Field: tool, Shown: int(step)}}}
		for _, html := range []bool{true, false} {
			want, werr := encode(r, html)
			got, gerr := r.AppendJSON(nil, html)
			if (werr != nil) != (gerr != nil) {
				t.Fatalf("errors differ: encoding/json %v, AppendJSON %v", werr, gerr)
			}
			if werr == nil && !bytes.Equal(got, want) {
				t.Fatalf("escapeHTML %v:\n got %s\nwant %s", html, got, want)
			}
		}
	})
}

// encode is encoding/json's encoding of r, with or without HTML escaping,
// without the Encoder's newline.
func encode(r *Result, html bool) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// TestAppendJSONStepAt: the offset points at meta.step's digits, so that
// writing another number there gives the encoding of the result at that
// step, even when the data holds a "step" of its own.
func TestAppendJSONStepAt(t *testing.T) {
	r := &Result{OK: true, Data: json.RawMessage(`{"meta":{"run_id":"x","step":0}}`), Meta: Meta{RunID: `r"1`, Step: 0}}
	b, at, err := r.AppendJSONStepAt([]byte("pre"), true)
	if err != nil {
		t.Fatal(err)
	}
	if b[at] != '0' {
		t.Fatalf("offset %d holds %q, want the step's 0", at, b[at])
	}
	spliced := append(append(append([]byte{}, b[len("pre"):at]...), "4711"...), b[at+1:]...)
	r.Meta.Step = 4711
	want, _ := json.Marshal(r)
	if !bytes.Equal(spliced, want) {
		t.Fatalf("\n got %s\nwant %s", spliced, want)
	}
}
