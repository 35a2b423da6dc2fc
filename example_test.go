package toolgate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
)

// Embedding toolgate in a Go program: a Go-function tool, a run, a call, and
// a call the model got wrong.
func Example() {
	ctx := context.Background()
	cfg := &config.Config{Tools: map[string]*config.Tool{
		"get_weather": {
			Description: "Current temperature of a city.",
			Effect:      "read",
			InputSchema: map[string]any{
				"type": "object", "required": []any{"city"}, "additionalProperties": false,
				"properties": map[string]any{"city": map[string]any{"type": "string"}},
			},
			Func: func(ctx context.Context, args json.RawMessage) (any, error) {
				var a struct{ City string }
				json.Unmarshal(args, &a)
				return map[string]any{"city": a.City, "celsius": 31}, nil
			},
		},
	}}
	gw, err := toolgate.Open(ctx, toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer gw.Close()
	run, _ := gw.StartRun(ctx, toolgate.RunOptions{ID: "r1", Principal: toolgate.Principal{ID: "cust_42"}})

	res, _ := gw.Call(ctx, run.ID, "get_weather", map[string]any{"city": "Pune"})
	fmt.Println(res.OK, string(res.Data), res.Meta.Next)

	res, _ = gw.Call(ctx, run.ID, "get_weather", map[string]any{"city": "Pune", "units": "F"})
	fmt.Println(res.OK, res.Error.Code, res.Meta.Next)
	// Output:
	// true {"celsius":31,"city":"Pune"} continue
	// false unknown_arguments fix_args
}

// A write is executed once per operation: the repeat returns the stored
// result and nothing is sent again.
func ExampleGateway_Call_dedupe() {
	ctx := context.Background()
	sent := 0
	cfg := &config.Config{Tools: map[string]*config.Tool{
		"send_email": {
			Description: "Send one email.",
			Effect:      "write",
			InputSchema: map[string]any{
				"type": "object", "required": []any{"to"},
				"properties": map[string]any{"to": map[string]any{"type": "string"}},
			},
			Func: func(ctx context.Context, args json.RawMessage) (any, error) {
				sent++
				return map[string]any{"message_id": fmt.Sprintf("m-%d", sent)}, nil
			},
		},
	}}
	gw, _ := toolgate.Open(ctx, toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	defer gw.Close()
	run, _ := gw.StartRun(ctx, toolgate.RunOptions{ID: "r1", Principal: toolgate.Principal{ID: "u1"}})

	first, _ := gw.Call(ctx, run.ID, "send_email", map[string]any{"to": "a@example.com"})
	again, _ := gw.Call(ctx, run.ID, "send_email", map[string]any{"to": "a@example.com"})
	fmt.Println(string(first.Data), first.Meta.Replayed)
	fmt.Println(string(again.Data), again.Meta.Replayed)
	fmt.Println("emails sent:", sent)
	// Output:
	// {"message_id":"m-1"} false
	// {"message_id":"m-1"} true
	// emails sent: 1
}
