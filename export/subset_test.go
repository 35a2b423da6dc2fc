package export

import (
	"testing"
)

func TestSubset(t *testing.T) {
	cfg := testConfig(t)
	tests := []struct {
		name  string
		names []string
		want  []string
	}{
		{"a key's tools", []string{"issue_refund", "get_order"}, []string{"get_order", "issue_refund"}},
		{"a name that is no tool is skipped", []string{"get_order", "gone"}, []string{"get_order"}},
		{"none", []string{}, []string{}},
		{"every tool", cfg.ToolNames(), cfg.ToolNames()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, format := range append([]string{FormatToolgate}, Formats...) {
				list, err := Format(Subset(cfg, tt.names), format)
				if err != nil {
					t.Fatal(err)
				}
				if got := listedNames(t, list); !equal(got, tt.want) {
					t.Errorf("%s list: %v, want %v", orOwn(format), got, tt.want)
				}
			}
		})
	}
	if len(cfg.Tools) != 3 {
		t.Errorf("Subset changed the config: %d tools", len(cfg.Tools))
	}
}

func listedNames(t *testing.T, list any) []string {
	t.Helper()
	out := []string{}
	switch l := list.(type) {
	case *ToolgateList:
		for _, x := range l.Tools {
			out = append(out, x.Name)
		}
	case []OpenAITool:
		for _, x := range l {
			out = append(out, x.Function.Name)
		}
	case []OpenAIResponsesTool:
		for _, x := range l {
			out = append(out, x.Name)
		}
	case []AnthropicTool:
		for _, x := range l {
			out = append(out, x.Name)
		}
	case []MCPTool:
		for _, x := range l {
			out = append(out, x.Name)
		}
	default:
		t.Fatalf("unexpected list %T", list)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func orOwn(format string) string {
	if format == "" {
		return "toolgate"
	}
	return format
}
