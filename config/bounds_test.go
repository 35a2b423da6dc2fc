package config

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// refBomb is properties.x = {$ref: d0}, dI = {allOf: [{$ref: dI+1},
// {$ref: dI+1}]} to depth: 2^depth schemas once expanded.
func refBomb(depth int) map[string]any {
	defs := map[string]any{}
	for i := range depth {
		next := map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i+1)}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"allOf": []any{next, next}}
	}
	defs[fmt.Sprintf("d%d", depth)] = map[string]any{"type": "string"}
	return map[string]any{"type": "object", "$defs": defs, "properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/d0"}}}
}

// nested is an object schema nesting depth levels of properties.
func nested(depth int) map[string]any {
	s := map[string]any{"type": "string"}
	for range depth {
		s = map[string]any{"type": "object", "properties": map[string]any{"a": s}}
	}
	return s
}

func TestCheckSchemaBounds(t *testing.T) {
	recursive := map[string]any{"type": "object", "properties": map[string]any{
		"children": map[string]any{"type": "array", "items": map[string]any{"$ref": "#"}}}}
	shared := map[string]any{"type": "string"}
	for _, tt := range []struct {
		name   string
		schema map[string]any
		bytes  int
		want   string // "" means taken
	}{
		{"plain", map[string]any{"type": "object", "properties": map[string]any{"a": shared, "b": shared}}, 0, ""},
		{"recursive type", recursive, 0, ""},
		{"small bomb", refBomb(8), 0, ""},
		{"the issue's bomb", refBomb(24), 0, "more than 200000 parts"},
		{"deep", nested(40), 0, "deeper than 64"},
		{"too big", map[string]any{}, MaxSchemaBytes + 1, "bytes, over the limit"},
		{"another document", map[string]any{"$ref": "https://169.254.169.254/x.json"}, 0, "names another document"},
		{"anchor", map[string]any{"$ref": "#node"}, 0, ""},
		{"dangling", map[string]any{"$ref": "#/$defs/none"}, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSchemaBounds(tt.schema, tt.bytes)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestCheckSchemaBoundsDecoded: a bomb decoded from JSON (every $ref its own
// map, as a server sends it) is refused as well.
func TestCheckSchemaBoundsDecoded(t *testing.T) {
	b, _ := json.Marshal(refBomb(24))
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if err := CheckSchemaBounds(m, len(b)); err == nil {
		t.Fatal("the decoded bomb was taken")
	}
}

func TestCutDescription(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{
		{"short", 5},
		{strings.Repeat("a", MaxDescriptionBytes), MaxDescriptionBytes},
		{strings.Repeat("a", MaxDescriptionBytes+1), MaxDescriptionBytes},
		{strings.Repeat("é", 3000), MaxDescriptionBytes - 1},
	} {
		got := CutDescription(tt.in)
		if len(got) != tt.want {
			t.Errorf("CutDescription(%d bytes) is %d bytes, want %d", len(tt.in), len(got), tt.want)
		}
		if len(tt.in) > MaxDescriptionBytes && !strings.HasSuffix(got, DescriptionCut) {
			t.Errorf("no marker at the end: %q", got[len(got)-8:])
		}
	}
}
