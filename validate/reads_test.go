package validate

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/types"
)

// answer is a Reader that answers every read with the same data or error,
// and remembers the lookup it was asked for.
type answer struct {
	data json.RawMessage
	err  *ReadError
	got  *Lookup
}

func (a *answer) Read(_ context.Context, l *Lookup) (json.RawMessage, *ReadError) {
	a.got = l
	return a.data, a.err
}

func TestCheckOwner(t *testing.T) {
	v := setup(t)
	c := checkedRefund(t, v, `{"order_id":"ORD-4471","amount_paise":425000}`)
	tests := []struct {
		name     string
		read     answer
		code     types.Code // "" owns
		contains string
	}{
		{"owns", answer{data: json.RawMessage(`{"customer_id":"cust_42"}`)}, "", ""},
		{"another's", answer{data: json.RawMessage(`{"customer_id":"cust_7"}`)}, types.CodeNotOwner, "does not belong to principal cust_42"},
		{"rejected: no such object to see", answer{err: &ReadError{Code: types.CodeRejected, Message: "404"}}, types.CodeNotOwner, "checked with get_order"},
		{"timed out", answer{err: &ReadError{Code: types.CodeTimeoutUnknownOutcome, Message: "read timeout", TimedOut: true}}, types.CodeTimeout, "did not answer within the call's deadline"},
		{"could not be made", answer{err: &ReadError{Code: types.CodeConnectFailed, Message: "payments refused the connection"}}, types.CodeConnectFailed, "could not be made: payments refused the connection. Nothing was done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := v.CheckOwner(context.Background(), c, &tt.read)
			if tt.read.got != c.Owner {
				t.Errorf("read %+v, want the prepared lookup %+v", tt.read.got, c.Owner)
			}
			switch {
			case tt.code == "" && r != nil:
				t.Fatalf("refused: %s: %s", r.Code, r.Message)
			case tt.code == "":
			case r == nil || r.Code != tt.code || r.Rule != -1 || !strings.Contains(r.Message, tt.contains):
				t.Fatalf("refusal = %+v, want %s with %q", r, tt.code, tt.contains)
			}
		})
	}
	g, r := v.Check(&Input{Tool: "get_order", Args: json.RawMessage(`{"order_id":"ORD-1"}`)})
	if r != nil {
		t.Fatal(r.Message)
	}
	var none answer
	if r := v.CheckOwner(context.Background(), g, &none); r != nil || none.got != nil {
		t.Errorf("a tool without owner: refusal %+v, read %+v", r, none.got)
	}
	// A call whose lookup was not prepared (Check refused it) is never
	// taken to be the principal's.
	unprepared := *c
	unprepared.Owner = nil
	if r := v.CheckOwner(context.Background(), &unprepared, &answer{data: json.RawMessage(`{"customer_id":"cust_42"}`)}); r == nil || r.Code != types.CodeInternalError {
		t.Errorf("an unprepared ownership check: refusal %+v, want internal_error", r)
	}
}

func TestVerify(t *testing.T) {
	v := setup(t)
	c := checkedRefund(t, v, `{"order_id":"ORD-4471","amount_paise":425000}`)
	tests := []struct {
		name  string
		read  answer
		found bool
		why   string
	}{
		{"found", answer{data: json.RawMessage(`{"refunds":[{"amount_paise":425000}]}`)}, true, ""},
		{"not found", answer{data: json.RawMessage(`{"refunds":[]}`)}, false, ""},
		{"read failed", answer{err: &ReadError{Code: types.CodeUpstreamError, Message: "payments answered 503"}}, false, "the verify read list_refunds failed: payments answered 503"},
		{"answer not judged", answer{data: json.RawMessage(`{}`)}, false, "the verify read's answer could not be judged: verify.found ("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found, data, why := v.Verify(context.Background(), c, &tt.read)
			if tt.read.got == nil || tt.read.got.Tool.Name != "list_refunds" || argsJSON(t, tt.read.got) != `{"order_id":"ORD-4471"}` {
				t.Fatalf("read %+v, want list_refunds of the order", tt.read.got)
			}
			if found != tt.found || (tt.why == "") != (why == "") || !strings.Contains(why, tt.why) {
				t.Fatalf("Verify = %v, %s, %q; want %v, %q", found, data, why, tt.found, tt.why)
			}
			if found && string(data) != string(tt.read.data) {
				t.Errorf("answer = %s, want the read's %s", data, tt.read.data)
			}
		})
	}
	g, r := v.Check(&Input{Tool: "get_order", Args: json.RawMessage(`{"order_id":"ORD-1"}`)})
	if r != nil {
		t.Fatal(r.Message)
	}
	if found, _, why := v.Verify(context.Background(), g, &answer{}); found || !strings.Contains(why, "could not be prepared") {
		t.Errorf("a tool without verify: found %v, why %q", found, why)
	}
}
