package validate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/config"
)

func TestStateWriter(t *testing.T) {
	fn := func(ctx context.Context, args json.RawMessage) (any, error) { return nil, nil }
	schema := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	cases := []struct {
		name    string
		tool    config.Tool
		writer  bool
		reader  bool
		limited bool
	}{
		{"plain write", config.Tool{}, false, false, false},
		{"rule on args", config.Tool{Rules: []config.Rule{{Deny: "args.n > 5", Message: "no"}}}, false, false, false},
		{"rule on state", config.Tool{Rules: []config.Rule{{Deny: "state.total + args.n > 5", Message: "no"}}}, true, true, true},
		{"state update", config.Tool{State: map[string]string{"last": "args.n"}}, true, false, true},
		{"quota on args", config.Tool{Quotas: []config.Quota{{Name: "q", Amount: "args.n", Limit: 5, Window: config.Duration(60e9)}}}, false, false, true},
		{"quota on state", config.Tool{Quotas: []config.Quota{{Name: "q", Amount: "state.n", Limit: 5, Window: config.Duration(60e9)}}}, true, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tool := c.tool
			tool.Description, tool.InputSchema, tool.Func = "t", schema, fn
			cfg := &config.Config{Tools: map[string]*config.Tool{"t": &tool}}
			if err := cfg.Normalize(); err != nil {
				t.Fatal(err)
			}
			v, err := Compile(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			ct, _ := v.Tool("t")
			if ct.StateWriter != c.writer || ct.StateReader != c.reader || ct.Limited() != c.limited {
				t.Errorf("StateWriter %v, StateReader %v, Limited %v; want %v, %v, %v", ct.StateWriter, ct.StateReader, ct.Limited(), c.writer, c.reader, c.limited)
			}
		})
	}
}
