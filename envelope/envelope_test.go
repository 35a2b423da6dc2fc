package envelope

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/types"
)

func TestData(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"json object passes through", `{"a":9007199254740993}`, `{"a":9007199254740993}`},
		{"empty body is null", ``, `null`},
		{"bare string is quoted", `refund created`, `"refund created"`},
		{"html is quoted", `<h1>502</h1>`, `"\u003ch1\u003e502\u003c/h1\u003e"`},
		{"binary is described", "\xff\xfe\x00", `"\u003c3 bytes of binary data\u003e"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Data([]byte(tt.body))
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("not valid JSON: %s", got)
			}
		})
	}
}

func TestPanicHidesDetails(t *testing.T) {
	r := Panic("secret token abc123 at main.go:42", types.Meta{Tool: "t"})
	if r.OK || r.Error.Code != types.CodeInternalError {
		t.Fatalf("want internal_error, got %+v", r)
	}
	if strings.Contains(r.Error.Message, "abc123") || strings.Contains(r.Error.Message, "main.go") {
		t.Errorf("panic value leaked into the message: %q", r.Error.Message)
	}
	b, err := json.Marshal(r)
	if err != nil || !json.Valid(b) {
		t.Fatalf("envelope does not encode: %v", err)
	}
}

func TestSettle(t *testing.T) {
	tests := []struct {
		effect    types.Effect
		code      types.Code
		delivered bool
		want      types.SideEffect
		retryable bool
	}{
		{types.EffectWrite, types.CodeOK, true, types.SideEffectCommitted, false},
		{types.EffectRead, types.CodeOK, true, types.SideEffectNone, false},
		{types.EffectWrite, types.CodeTimeoutUnknownOutcome, true, types.SideEffectUnknown, false},
		{types.EffectWrite, types.CodeUpstreamError, true, types.SideEffectUnknown, false},
		{types.EffectWrite, types.CodeUpstreamError, false, types.SideEffectNone, true},
		{types.EffectIdempotent, types.CodeTimeout, true, types.SideEffectUnknown, true},
		{types.EffectRead, types.CodeTimeout, true, types.SideEffectNone, true},
		{types.EffectWrite, types.CodeConnectFailed, false, types.SideEffectNone, true},
		{types.EffectWrite, types.CodeRejected, true, types.SideEffectNone, false},
		{types.EffectWrite, types.CodeInvalidArgument, false, types.SideEffectNone, false},
	}
	for _, tt := range tests {
		var r *types.Result
		if tt.code == types.CodeOK {
			r = OK(nil, types.Meta{})
		} else {
			r = Fail(tt.code, "m", types.Meta{})
		}
		Settle(r, tt.effect, tt.delivered)
		if r.Meta.SideEffect != tt.want {
			t.Errorf("%s/%s/delivered=%v: side effect %s, want %s", tt.effect, tt.code, tt.delivered, r.Meta.SideEffect, tt.want)
		}
		if r.Error != nil && r.Error.Retryable != tt.retryable {
			t.Errorf("%s/%s: retryable %v, want %v", tt.effect, tt.code, r.Error.Retryable, tt.retryable)
		}
	}
}
