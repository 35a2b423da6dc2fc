package validate

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckOutput(t *testing.T) {
	schema := map[string]any{"type": "object", "required": []any{"refund_id"},
		"properties": map[string]any{"refund_id": map[string]any{"type": "string"}, "amount_paise": map[string]any{"type": "integer"}}}
	out, problems := compileOutput(nil, "issue_refund", schema)
	if len(problems) > 0 {
		t.Fatal(problems[0].Error())
	}
	for _, tc := range []struct {
		name, data, want string // want: "" for conforming, else part of the error
	}{
		{"conforms", `{"refund_id":"rf_1","amount_paise":9007199254740993}`, ""},
		{"missing", `{"amount_paise":1}`, "missing property 'refund_id'"},
		{"wrong type", `{"refund_id":42}`, "at /refund_id"},
		{"not an integer", `{"refund_id":"rf_1","amount_paise":1.5}`, "at /amount_paise"},
		{"a bare string", `"done"`, "got string, want object"},
		{"not JSON", `{`, "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&Compiled{output: out}).CheckOutput(json.RawMessage(tc.data))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("conforming answer refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	if err := (&Compiled{}).CheckOutput(json.RawMessage(`"anything"`)); err != nil {
		t.Errorf("a tool without output_schema refused an answer: %v", err)
	}
	if _, problems := compileOutput(nil, "t", map[string]any{"type": "objekt"}); len(problems) != 1 || problems[0].Key != "output_schema" {
		t.Errorf("an invalid output_schema gave problems %v, want one on output_schema", problems)
	}
}
