package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// funcAttempt is an attempt of a Go-function tool named "lookup".
func funcAttempt(fn config.Func, args map[string]any) *Attempt {
	return &Attempt{Tool: &config.Tool{Name: "lookup", Func: fn}, Args: args}
}

func TestFuncs(t *testing.T) {
	type order struct {
		ID     string `json:"id"`
		Amount int64  `json:"amount_paise"`
	}
	tests := []struct {
		name    string
		fn      config.Func
		data    string   // the response data on success
		failure *Failure // the failure otherwise (Err ignored)
	}{
		{
			name: "value is encoded",
			fn: func(context.Context, json.RawMessage) (any, error) {
				return order{ID: "ORD-1", Amount: 425000}, nil
			},
			data: `{"id":"ORD-1","amount_paise":425000}`,
		},
		{
			name: "raw message passes through as is",
			fn: func(context.Context, json.RawMessage) (any, error) {
				return json.RawMessage(`{"b": 9007199254740993, "a": [1.50]}`), nil
			},
			data: `{"b": 9007199254740993, "a": [1.50]}`,
		},
		{
			name: "nil is null",
			fn:   func(context.Context, json.RawMessage) (any, error) { return nil, nil },
			data: `null`,
		},
		{
			name: "invalid raw message",
			fn: func(context.Context, json.RawMessage) (any, error) {
				return json.RawMessage(`{oops`), nil
			},
			failure: &Failure{Kind: KindFuncError, Delivered: true, Code: types.CodeInternalError,
				Message: "lookup returned a value that is not JSON: invalid json.RawMessage"},
		},
		{
			name: "panic with a value",
			fn: func(context.Context, json.RawMessage) (any, error) {
				panic("secret token abc123\nclosed")
			},
			failure: &Failure{Kind: KindPanic, Delivered: true, Code: types.CodeInternalError,
				Message: "lookup failed inside toolgate's host program (a string panic); this is a bug in the tool, not in the arguments"},
		},
		{
			name: "runtime panic",
			fn: func(context.Context, json.RawMessage) (any, error) {
				var items []int
				return items[3], nil
			},
			failure: &Failure{Kind: KindPanic, Delivered: true, Code: types.CodeInternalError,
				Message: "lookup failed inside toolgate's host program (a runtime.boundsError panic); this is a bug in the tool, not in the arguments"},
		},
		{
			name: "transient FuncError, rate limited, not delivered",
			fn: func(context.Context, json.RawMessage) (any, error) {
				return nil, &config.FuncError{Code: types.CodeRateLimited, Message: "quota spent", Transient: true, RetryAfter: 3 * time.Second}
			},
			failure: &Failure{Kind: KindFuncError, Delivered: false, Transient: true, RetryAfter: 3 * time.Second,
				Code: types.CodeRateLimited, Message: "quota spent"},
		},
		{
			name: "connect failure FuncError is not delivered",
			fn: func(context.Context, json.RawMessage) (any, error) {
				return nil, fmt.Errorf("calling the ledger: %w", &config.FuncError{Code: types.CodeConnectFailed, Message: "ledger down", Transient: true})
			},
			failure: &Failure{Kind: KindFuncError, Delivered: false, Transient: true,
				Code: types.CodeConnectFailed, Message: "ledger down"},
		},
		{
			name: "permanent FuncError is delivered",
			fn: func(context.Context, json.RawMessage) (any, error) {
				return nil, &config.FuncError{Code: types.CodeRejected, Message: "order is closed"}
			},
			failure: &Failure{Kind: KindFuncError, Delivered: true, Code: types.CodeRejected, Message: "order is closed"},
		},
		{
			name: "transient upstream FuncError is delivered",
			fn: func(context.Context, json.RawMessage) (any, error) {
				return nil, &config.FuncError{Message: "flaky", Transient: true}
			},
			failure: &Failure{Kind: KindFuncError, Delivered: true, Transient: true, Code: types.CodeUpstreamError, Message: "flaky"},
		},
		{
			name: "plain error",
			fn: func(context.Context, json.RawMessage) (any, error) {
				return nil, errors.New("disk full")
			},
			failure: &Failure{Kind: KindFuncError, Delivered: true, Code: types.CodeUpstreamError, Message: "lookup failed: disk full"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, failure := Funcs{}.Do(context.Background(), funcAttempt(tt.fn, nil))
			if tt.failure == nil {
				if failure != nil {
					t.Fatalf("failure %v, want data %s", failure, tt.data)
				}
				if string(resp.Data) != tt.data || resp.Status != 200 {
					t.Errorf("response %d %s, want 200 %s", resp.Status, resp.Data, tt.data)
				}
				return
			}
			assertFailure(t, failure, *tt.failure)
			if strings.Contains(failure.Message, "goroutine") || strings.Contains(failure.Message, ".go:") {
				t.Errorf("message carries a stack trace: %q", failure.Message)
			}
		})
	}
}

func TestFuncsCanonicalArgs(t *testing.T) {
	got := make(chan string, 1)
	fn := func(_ context.Context, args json.RawMessage) (any, error) {
		got <- string(args)
		return args, nil
	}
	args := map[string]any{"z": "<&>", "amount_paise": num("9007199254740993"), "nested": map[string]any{"b": num("1.10"), "a": nil}}
	resp, failure := Funcs{}.Do(context.Background(), funcAttempt(fn, args))
	if failure != nil {
		t.Fatal(failure)
	}
	want := `{"amount_paise":9007199254740993,"nested":{"a":null,"b":1.10},"z":"<&>"}`
	if args := <-got; args != want {
		t.Errorf("args = %s, want %s", args, want)
	}
	if string(resp.Data) != want {
		t.Errorf("data = %s, want %s", resp.Data, want)
	}

	if _, failure := (Funcs{}).Do(context.Background(), funcAttempt(fn, nil)); failure != nil {
		t.Fatal(failure)
	}
	if args := <-got; args != `{}` {
		t.Errorf("nil args = %s, want {}", args)
	}
}

func TestFuncsCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	fn := func(ctx context.Context, _ json.RawMessage) (any, error) {
		cancel()
		<-ctx.Done()
		return nil, fmt.Errorf("waiting: %w", ctx.Err())
	}
	_, failure := Funcs{}.Do(ctx, funcAttempt(fn, nil))
	if failure == nil || failure.Kind != KindCanceled || failure.Transient {
		t.Fatalf("failure = %+v, want canceled, not transient", failure)
	}
	if !errors.Is(failure, context.Canceled) {
		t.Errorf("failure does not wrap context.Canceled")
	}
}

func TestRouter(t *testing.T) {
	b := setup(t, nil)
	b.server.Config.Handler = jsonHandler(`{"from":"http"}`)
	router := Router{HTTP: b.h}
	fn := func(context.Context, json.RawMessage) (any, error) { return map[string]string{"from": "func"}, nil }

	tests := []struct {
		name    string
		router  Router
		attempt *Attempt
		data    string
		kind    Kind
	}{
		{"Go function", router, funcAttempt(fn, nil), `{"from":"func"}`, 0},
		{"HTTP", router, httpAttempt(b.server.URL, "GET", "/", nil), `{"from":"http"}`, 0},
		{"HTTP without an executor", Router{}, httpAttempt(b.server.URL, "GET", "/", nil), "", KindInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, failure := tt.router.Do(context.Background(), tt.attempt)
			if tt.kind != 0 {
				if failure == nil || failure.Kind != tt.kind {
					t.Fatalf("failure = %v, want kind %v", failure, tt.kind)
				}
				return
			}
			if failure != nil {
				t.Fatal(failure)
			}
			if string(resp.Data) != tt.data {
				t.Errorf("data = %s, want %s", resp.Data, tt.data)
			}
		})
	}
}
