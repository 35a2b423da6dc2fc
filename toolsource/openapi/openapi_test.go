package openapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// load imports the document at path (relative to this package) with
// every operation selected.
func load(t *testing.T, path string) *Document {
	t.Helper()
	doc, err := Load(t.Context(), &config.Dependency{Name: "api", OpenAPI: path, Import: &config.Import{}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func tools(doc *Document) map[string]config.ImportedTool {
	m := map[string]config.ImportedTool{}
	for _, t := range doc.Tools {
		m[t.Name] = t
	}
	return m
}

// js is v as compact JSON, for comparing schemas.
func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPetstoreYAMLWithRefsIntoAnotherFile(t *testing.T) {
	doc := load(t, filepath.Join("..", "..", "testdata", "openapi", "petstore", "petstore.yaml"))
	got := tools(doc)
	tests := []struct {
		name, tool string
		value      any
		want       string
	}{
		{"query enum from a $ref'd parameter into schemas.yaml", "listPets", got["listPets"].InputSchema["properties"].(map[string]any)["status"],
			`{"description":"Only pets with this status.","enum":["available","pending","sold"],"type":"string"}`},
		{"query bounds", "listPets", got["listPets"].InputSchema["properties"].(map[string]any)["limit"],
			`{"description":"How many pets to return at most.","maximum":100,"minimum":1,"type":"integer"}`},
		{"JSON body spread into arguments, nullable as a null type", "createPet", got["createPet"].InputSchema,
			`{"additionalProperties":false,"properties":{"name":{"minLength":1,"type":"string"},"status":{"enum":["available","pending","sold"],"type":"string"},"tag":{"type":["string","null"]}},"required":["name"],"type":"object"}`},
		{"path parameter of the path item", "showPetById", got["showPetById"].InputSchema,
			`{"additionalProperties":false,"properties":{"petId":{"description":"The pet's id.","type":"string"}},"required":["petId"],"type":"object"}`},
		{"a recursive schema is cut to any value", "showPetById", got["showPetById"].OutputSchema["properties"].(map[string]any)["friend"],
			`{}`},
		{"placement of every argument", "put_pets_petId_tag", got["put_pets_petId_tag"].Request.Params,
			`{"X-Request-Id":{"in":"header","name":"X-Request-Id"},"body_petId":{"in":"body","name":"petId","required":true},"dryRun":{"in":"query","name":"dryRun"},"petId":{"in":"path","name":"petId"},"tag":{"in":"body","name":"tag","required":true}}`},
	}
	for _, tt := range tests {
		if _, ok := got[tt.tool]; !ok {
			t.Fatalf("no tool %s", tt.tool)
		}
		if s := js(t, tt.value); s != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, s, tt.want)
		}
	}
	if r := got["showPetById"].OutputSchema["required"]; r != nil {
		t.Errorf("an output schema keeps the types, not the required list: %v", r)
	}
	effects := map[string]types.Effect{"listPets": types.EffectRead, "createPet": types.EffectWrite, "showPetById": types.EffectRead,
		"deletePet": types.EffectIdempotent, "adoptPet": types.EffectWrite, "put_pets_petId_tag": types.EffectIdempotent}
	for name, want := range effects {
		if got[name].Effect != want {
			t.Errorf("%s: effect %s, want %s", name, got[name].Effect, want)
		}
	}
	r := doc.Report
	if r.Operations != 7 || r.Tools != 6 || r.Imported != 6 || len(r.Skipped) != 1 || r.Skipped[0].Operation != "uploadPhoto" || r.Version != "3.0.3" {
		t.Errorf("report %+v", r)
	}
}

func TestOpenAPI31JSON(t *testing.T) {
	doc := load(t, filepath.Join("testdata", "v31", "api.json"))
	got := tools(doc)
	lines := got["get_orders_order_id_lines"]
	add := got["orders_add-lines"]
	update := got["orders_update"]
	tests := []struct {
		name  string
		value any
		want  string
	}{
		{"a name from method and path; the same name in query and header", lines.InputSchema,
			`{"additionalProperties":false,"properties":{"header_trace":{"type":"string"},"order_id":{"description":"The order.","pattern":"^ORD-[0-9]+$","type":"string"},"trace":{"type":["string","null"]}},"required":["order_id"],"type":"object"}`},
		{"cookies and Accept are not arguments", lines.Request.Params,
			`{"header_trace":{"in":"header","name":"trace"},"order_id":{"in":"path","name":"order_id"},"trace":{"in":"query","name":"trace"}}`},
		{"summary and description", lines.Description, `"The lines of an order.\n\nEvery line, oldest first."`},
		{"an array response is no output schema", lines.OutputSchema, `null`},
		{"an array body is the argument body; a ~1 pointer into another file", add.InputSchema["properties"].(map[string]any)["body"],
			`{"items":{"properties":{"qty":{"exclusiveMinimum":0,"type":"integer"},"sku":{"type":"string"}},"required":["sku"],"type":"object"},"type":"array"}`},
		{"the whole body placed", add.Request.Params["body"], `{"in":"body","required":true}`},
		{"a +json response is JSON", add.OutputSchema, `{"type":"object"}`},
		{"operationId kept as the source name", add.SourceName, `"orders/add-lines"`},
		{"an optional body's clashing property is body_<name>", update.InputSchema,
			`{"additionalProperties":false,"properties":{"body_order_id":{"type":"string"},"note":{"maxLength":200,"type":["string","null"]},"order_id":{"description":"The order.","pattern":"^ORD-[0-9]+$","type":"string"}},"required":["order_id"],"type":"object"}`},
		{"a $ref's sibling description laid over it", update.OutputSchema["description"], `"The order as it is now."`},
		{"a description from method and path when the document has none", update.Description, `"PATCH /orders/{order_id} on api."`},
	}
	for _, tt := range tests {
		if s := js(t, tt.value); s != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, s, tt.want)
		}
	}
	wantSkipped := []Skipped{
		{"session/get", "cookie parameter sid is required; toolgate does not send cookies"},
		{"session/options", "method OPTIONS is not one toolgate sends (GET, HEAD, PUT, DELETE, POST, PATCH)"},
		{"session_put", "its tool name session_put is already session/put's"},
	}
	if !reflect.DeepEqual(doc.Report.Skipped, wantSkipped) {
		t.Errorf("skipped %+v\nwant %+v", doc.Report.Skipped, wantSkipped)
	}
	wantCollisions := []Collision{{Name: "session_put", Operations: []string{"session/put", "session_put"}, Kept: "session/put"}}
	if !reflect.DeepEqual(doc.Report.Collisions, wantCollisions) {
		t.Errorf("collisions %+v", doc.Report.Collisions)
	}
	if doc.Report.Operations != 8 || doc.Report.Tools != 5 {
		t.Errorf("report %+v", doc.Report)
	}
}

func TestSchemaConversion(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"3.0 nullable enum takes null", `{"type":"string","enum":["a"],"nullable":true}`, `{"enum":["a",null],"type":["string","null"]}`},
		{"3.0 exclusiveMinimum true", `{"type":"number","minimum":0,"exclusiveMinimum":true,"maximum":9,"exclusiveMaximum":false}`, `{"exclusiveMinimum":0,"maximum":9,"type":"number"}`},
		{"OpenAPI-only keywords dropped", `{"type":"object","discriminator":{"propertyName":"k"},"xml":{},"example":1,"readOnly":true,"x-go":1,"properties":{}}`, `{"properties":{},"type":"object"}`},
		{"a pattern Go cannot compile is dropped", `{"type":"string","pattern":"^(?!x)"}`, `{"type":"string"}`},
		{"compositions converted", `{"oneOf":[{"type":"string","nullable":true},{"type":"integer"}]}`, `{"oneOf":[{"type":["string","null"]},{"type":"integer"}]}`},
		{"empty required dropped", `{"type":"object","required":[]}`, `{"type":"object"}`},
		{"malformed keywords left out", `{"type":"object","required":true,"properties":{"f":{"type":"file"},"n":{"type":"string","maxLength":-1,"minimum":"3","enum":[]}}}`,
			`{"properties":{"f":{"type":"string"},"n":{"type":"string"}},"type":"object"}`},
		{"huge numbers exact", `{"type":"integer","maximum":9007199254740993}`, `{"maximum":9007199254740993,"type":"integer"}`},
	}
	for _, tt := range tests {
		v, err := decode([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		c := newConverter(&reader{docs: map[string]any{}})
		if got := js(t, c.convert("/x.json", v)); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestToolName(t *testing.T) {
	long := "actions/add-custom-labels-to-self-hosted-runner-for-organization-and-enterprise"
	tests := []struct{ id, method, path, want string }{
		{"listPets", "GET", "/pets", "listPets"},
		{"repos/get", "GET", "/repos/{owner}/{repo}", "repos_get"},
		{"", "GET", "/pets/{petId}", "get_pets_petId"},
		{"", "DELETE", "/", "delete"},
		{"pets.list v2", "GET", "/", "pets_list_v2"},
		{long, "POST", "/", "actions_add-custom-labels-to-self-hosted-runner-for-organiz_" + "6f2a3f8e"},
	}
	for _, tt := range tests {
		got := toolName(tt.id, tt.method, tt.path)
		if tt.id == long {
			if len(got) != 64 || got[:55] != tt.want[:55] {
				t.Errorf("long id: %s (%d)", got, len(got))
			}
			if again := toolName(tt.id, tt.method, tt.path); again != got {
				t.Errorf("not stable: %s then %s", got, again)
			}
			continue
		}
		if got != tt.want {
			t.Errorf("toolName(%q, %s %s) = %s, want %s", tt.id, tt.method, tt.path, got, tt.want)
		}
	}
}

func TestDocumentProblems(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := writeFile(p, body); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct{ name, path, want string }{
		{"swagger 2", write("s.json", `{"swagger":"2.0","paths":{}}`), "is Swagger 2.0"},
		{"not a document", write("n.yaml", "- 1\n- 2\n"), "is not an OpenAPI document"},
		{"missing file", filepath.Join(dir, "absent.json"), "no such file"},
		{"$ref into a missing file", write("r.json", `{"openapi":"3.0.0","paths":{"/a":{"$ref":"other.json#/x"}}}`), "other.json"},
	}
	for _, tt := range tests {
		_, err := Load(t.Context(), &config.Dependency{Name: "api", OpenAPI: tt.path}, Options{})
		if err == nil || !contains(err.Error(), tt.want) {
			t.Errorf("%s: want %q, got %v", tt.name, tt.want, err)
		}
	}
}

// TestDocumentByURL: a document named by URL is fetched from 127.0.0.1,
// and its relative $ref is resolved against that URL.
func TestDocumentByURL(t *testing.T) {
	files := map[string]string{
		"/specs/api.yaml":          "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /items/{id}:\n    get:\n      operationId: getItem\n      parameters: [{$ref: 'parts/params.yaml#/Id'}]\n      responses: {'200': {description: ok}}\n",
		"/specs/parts/params.yaml": "Id: {name: id, in: path, required: true, schema: {type: integer}}\n",
	}
	var mu sync.Mutex
	var fetched []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetched = append(fetched, r.URL.Path)
		mu.Unlock()
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	defer srv.Close()
	doc := load(t, srv.URL+"/specs/api.yaml")
	item := tools(doc)["getItem"]
	if s := js(t, item.InputSchema["properties"]); s != `{"id":{"type":"integer"}}` {
		t.Errorf("schema %s", s)
	}
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(fetched, []string{"/specs/api.yaml", "/specs/parts/params.yaml"}) {
		t.Errorf("fetched %v", fetched)
	}
}

func TestQueryStyle(t *testing.T) {
	tests := []struct {
		param string
		want  string
	}{
		{`{}`, ""},
		{`{"style":"form","explode":true}`, ""},
		{`{"explode":false}`, config.StyleForm},
		{`{"style":"pipeDelimited"}`, config.StylePipeDelimited},
		{`{"style":"spaceDelimited","explode":true}`, ""},
		{`{"style":"deepObject","explode":true}`, config.StyleDeepObject},
	}
	for _, tt := range tests {
		var m map[string]any
		if err := json.Unmarshal([]byte(tt.param), &m); err != nil {
			t.Fatal(err)
		}
		if got := queryStyle(m); got != tt.want {
			t.Errorf("%s: style %q, want %q", tt.param, got, tt.want)
		}
	}
}
