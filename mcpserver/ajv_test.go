package mcpserver_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/export"
	"github.com/toolgate/toolgate/internal/testsupport/npmfixture"
)

// ajvScript compiles every schema of the file in argv[3] with Ajv's JSON
// Schema 2020-12 class (argv[2]) and prints {"count": n, "failed": [...]}.
// Formats are not checked (Ajv knows none without ajv-formats); unknown
// keywords are allowed, as a model API allows them.
const ajvScript = `
const Ajv2020 = require(process.argv[2]).default;
const items = JSON.parse(require("fs").readFileSync(process.argv[3], "utf8"));
const failed = [];
for (const it of items) {
  const ajv = new Ajv2020({strict: false, validateFormats: false});
  try { ajv.compile(it.schema); } catch (e) { failed.push(it.where + ": " + e.message); }
}
console.log(JSON.stringify({count: items.length, failed}));
`

// TestExportedSchemasCompileInAjv2020: every schema toolgate exports for the
// tools it imports from server-everything and server-filesystem (npm), in
// every format (toolgate's own, OpenAI chat and Responses, Anthropic, MCP;
// input and output schemas), compiles in Ajv 2020 (npm ajv, the validator
// much of the JavaScript ecosystem uses): no draft-07 $schema, no nested
// $schema, nothing the 2020-12 meta-schema refuses.
func TestExportedSchemasCompileInAjv2020(t *testing.T) {
	node := npmfixture.Node(t)
	ajv := filepath.Dir(npmfixture.Path(t, "ajv", "dist/2020.js"))
	everything := npmfixture.Path(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	filesystem := npmfixture.Path(t, "@modelcontextprotocol/server-filesystem", "dist/index.js")
	gw := gateway(t, "store: memory\ndependencies:\n"+
		"  every:\n    mcp: {command: ["+strconv.Quote(node)+", "+strconv.Quote(everything)+"]}\n    import: {tools: [\"*\"], prefix: ev_}\n"+
		"  files:\n    mcp: {command: ["+strconv.Quote(node)+", "+strconv.Quote(filesystem)+", "+strconv.Quote(t.TempDir())+"]}\n    import: {tools: [\"*\"], prefix: fs_}\n")

	type item struct {
		Where  string          `json:"where"`
		Schema json.RawMessage `json:"schema"`
	}
	var items []item
	for _, format := range append([]string{export.FormatToolgate}, export.Formats...) {
		list, err := export.Format(gw.Config(), format)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		collectSchemas(doc, "format "+strconv.Quote(format), func(where string, schema any) {
			raw, _ := json.Marshal(schema)
			items = append(items, item{where, raw})
		})
	}
	if len(items) < 40 {
		t.Fatalf("only %d schemas exported: were the servers' tools imported?", len(items))
	}
	path := filepath.Join(t.TempDir(), "schemas.json")
	b, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "ajv.js")
	if err := os.WriteFile(script, []byte(ajvScript), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, script, filepath.Join(ajv, "2020.js"), path).Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got struct {
		Count  int      `json:"count"`
		Failed []string `json:"failed"`
	}
	if err := json.Unmarshal(out, &got); err != nil || got.Count != len(items) {
		t.Fatalf("Ajv's answer %q (%v), want %d schemas checked", out, err, len(items))
	}
	if len(got.Failed) > 0 {
		t.Fatalf("Ajv 2020 refuses %d of %d exported schemas:\n%s", len(got.Failed), got.Count, strings.Join(got.Failed, "\n"))
	}
	t.Logf("Ajv 2020 compiled all %d exported schemas", got.Count)
}

// collectSchemas calls found for every schema in an exported tool list: the
// values of the keys the formats use for input and output schemas.
func collectSchemas(v any, where string, found func(string, any)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "parameters", "input_schema", "inputSchema", "outputSchema", "output_schema":
				if _, ok := x.(map[string]any); ok {
					found(where+" "+k, x)
					continue
				}
			}
			name := where
			if n, ok := v["name"].(string); ok {
				name = where + " " + n
			}
			collectSchemas(x, name, found)
		}
	case []any:
		for _, x := range v {
			collectSchemas(x, where, found)
		}
	}
}
