package normalise

import (
	"testing"

	"github.com/toolgate/toolgate/types"
)

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
			r = types.OK(nil, types.Meta{})
		} else {
			r = types.Fail(tt.code, "m", types.Meta{})
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
