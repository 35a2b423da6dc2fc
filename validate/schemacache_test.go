package validate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
)

// TestSharedSchemas: tools with the same schema share one compiled
// schema, each still checks its own answers, and a broken output schema
// is reported for every tool that has it.
func TestSharedSchemas(t *testing.T) {
	out := `{"type":"object","properties":{"id":{"type":"string"}}}`
	tool := func(output string) *config.Tool {
		return &config.Tool{Description: "d", Dependency: "api", Request: &config.Request{Method: "GET", Path: "/x"}, InputSchema: obj(t, `{"type":"object"}`), OutputSchema: obj(t, output)}
	}
	deps := map[string]*config.Dependency{"api": {Name: "api", BaseURL: "http://127.0.0.1:1"}}
	v, err := Compile(&config.Config{Dependencies: deps, Tools: map[string]*config.Tool{"a": tool(out), "b": tool(out),
		"c": tool(`{"type":"object","properties":{"id":{"type":"integer"}}}`)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := v.Tool("a")
	b, _ := v.Tool("b")
	c, _ := v.Tool("c")
	if a.output.schema != b.output.schema || a.args.schema != b.args.schema {
		t.Error("a and b have the same schemas but each was compiled")
	}
	if a.output.schema == c.output.schema {
		t.Error("c's output schema differs from a's but is a's")
	}
	tests := []struct {
		tool   *Compiled
		answer string
		ok     bool
	}{
		{a, `{"id":"x"}`, true}, {b, `{"id":1}`, false}, {c, `{"id":1}`, true}, {c, `{"id":"x"}`, false},
	}
	for _, tt := range tests {
		if err := tt.tool.CheckOutput(json.RawMessage(tt.answer)); (err == nil) != tt.ok {
			t.Errorf("%s answers %s: %v, want ok=%v", tt.tool.Name, tt.answer, err, tt.ok)
		}
	}

	broken := `{"type":"objekt"}`
	_, err = Compile(&config.Config{Dependencies: deps, Tools: map[string]*config.Tool{"x": tool(broken), "y": tool(broken)}}, nil)
	if err == nil {
		t.Fatal("two tools with an invalid output_schema compiled")
	}
	for _, name := range []string{"x", "y"} {
		if !strings.Contains(err.Error(), "tools."+name+".output_schema") {
			t.Errorf("no problem for %s's output_schema in:\n%v", name, err)
		}
	}
}
