package execute

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

func TestCheckRequest(t *testing.T) {
	goTool := &Attempt{Tool: &config.Tool{Name: "f", Func: func(context.Context, json.RawMessage) (any, error) { return nil, nil }}}
	tests := []struct {
		name    string
		attempt *Attempt
		code    types.Code // "" when the request can be built
	}{
		{"buildable", httpAttempt("http://127.0.0.1:1", "GET", "/orders/{id}", map[string]any{"id": "o1"}), ""},
		{"a dot segment is the caller's", httpAttempt("http://127.0.0.1:1", "GET", "/orders/{id}", map[string]any{"id": ".."}), types.CodeInvalidArgument},
		{"a bad base URL is left to Do (internal_error there)", httpAttempt("ftp://127.0.0.1:1", "GET", "/", nil), ""},
		{"a missing path argument is toolgate's", httpAttempt("http://127.0.0.1:1", "GET", "/orders/{id}", nil), types.CodeInternalError},
		{"a header the key breaks is the caller's", keyAttempt("tag:x\r\n", map[string]any{"tag": "x\r\n"}), types.CodeInvalidArgument},
		{"a Go tool is not checked", goTool, ""},
	}
	r := Router{HTTP: NewHTTP(HTTPOptions{})}
	defer r.HTTP.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := r.CheckRequest(tt.attempt)
			if tt.code == "" {
				if f != nil {
					t.Fatalf("refused: %v", f)
				}
				return
			}
			if f == nil || f.Code != tt.code || f.Kind != KindInvalidRequest || f.Transient || f.Delivered || f.Unhealthy() {
				t.Fatalf("failure = %+v, want %s, not transient, not delivered", f, tt.code)
			}
		})
	}
}

// keyAttempt is an attempt whose tool sends the operation key in a header.
func keyAttempt(key string, args map[string]any) *Attempt {
	a := httpAttempt("http://127.0.0.1:1", "POST", "/tags", args)
	a.Tool.Idempotency.Header = "Idempotency-Key"
	a.OperationKey = key
	return a
}
