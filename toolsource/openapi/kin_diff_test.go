package openapi

// The differential test: toolsource/openapi reads documents by hand, so every
// document the tests have is read again with kin-openapi (a test-only
// dependency) and what each side sees of every operation must agree. The
// reading and $ref resolution are kin-openapi's; toolgate's rules for what
// becomes of an operation (docs/openapi.md) are applied on top of them
// here, each one where it is named.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/toolgate/toolgate/config"
)

// opFacts is what the differential test compares of one operation.
type opFacts struct {
	// skip is the kind of reason an operation is skipped for ("" when it
	// is a tool): a phrase its reason holds.
	skip string
	// params are "in name required", sorted.
	params []string
	// body: "" none, "object" (its properties become arguments), "value"
	// (the one argument body).
	body         string
	bodyRequired bool
	bodyProps    []string
	bodyReq      []string
	// output: a 2xx JSON response schema that is an object.
	output bool
}

func (f opFacts) String() string {
	if f.skip != "" {
		return "skipped (" + f.skip + ")"
	}
	return fmt.Sprintf("params %q body %q required=%v props %q required-props %q output=%v",
		f.params, f.body, f.bodyRequired, f.bodyProps, f.bodyReq, f.output)
}

// skip kinds, each a phrase of the reason toolsource/openapi gives.
const (
	skipMethod  = "is not one toolgate sends"
	skipCookie  = "toolgate does not send cookies"
	skipBody    = "toolgate sends JSON bodies only"
	skipPath    = "no path parameter describes it"
	skipNoName  = "has no name"
	skipClashes = "is already" // two operations make the same tool name
)

// kinMethods are the methods of a path item that toolsource/openapi reads,
// upper case as kin-openapi keys them (kin-openapi also knows CONNECT and
// 3.2's additional operations; toolsource/openapi reads only OpenAPI 3.0 and
// 3.1's eight).
var kinMethods = []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}

// kinFacts reads the document with kin-openapi and applies toolgate's
// rules: operations by "METHOD path", and "METHOD path" by operationId.
func kinFacts(t *testing.T, path string) (map[string]opFacts, map[string]string) {
	t.Helper()
	doc := kinLoad(t, path)
	out := map[string]opFacts{}
	ids := map[string]string{}
	owner := map[string]bool{} // tool names taken
	paths := doc.Paths.Map()
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		ops := paths[p].Operations()
		for _, m := range kinMethods {
			op := ops[m]
			if op == nil {
				continue
			}
			f := kinOperation(m, p, paths[p], op)
			// Two operations whose tool names (toolgate's naming rule)
			// are the same: the first in path order keeps it.
			if name := toolName(op.OperationID, m, p); f.skip == "" {
				if owner[name] {
					f = opFacts{skip: skipClashes}
				}
				owner[name] = true
			}
			out[m+" "+p] = f
			if op.OperationID != "" {
				ids[op.OperationID] = m + " " + p
			}
		}
	}
	return out, ids
}

// kinLoad reads the document at path with kin-openapi, resolving every
// $ref. A JSON document is decoded with encoding/json into kin-openapi's
// types and then resolved, which on GitHub's description keeps a fifth
// of the memory of kin-openapi's YAML reader, the one LoadFromFile uses.
func kinLoad(t *testing.T, path string) *openapi3.T {
	t.Helper()
	l := openapi3.NewLoader()
	l.IsExternalRefsAllowed = true
	if filepath.Ext(path) != ".json" {
		doc, err := l.LoadFromFile(path)
		if err != nil {
			t.Fatalf("kin-openapi: %v", err)
		}
		return doc
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := &openapi3.T{}
	if err := json.Unmarshal(raw, doc); err != nil {
		t.Fatalf("kin-openapi: %v", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.ResolveRefsIn(doc, &url.URL{Path: filepath.ToSlash(abs)}); err != nil {
		t.Fatalf("kin-openapi: %v", err)
	}
	return doc
}

func kinOperation(method, path string, item *openapi3.PathItem, op *openapi3.Operation) opFacts {
	var f opFacts
	if method == "OPTIONS" || method == "TRACE" {
		return opFacts{skip: skipMethod}
	}
	// The operation's parameters replace the path item's of the same name
	// and location (OpenAPI's rule; kin-openapi keeps both lists).
	type key struct{ in, name string }
	params := map[key]*openapi3.Parameter{}
	for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, ref := range list {
			p := ref.Value
			if p.Name == "" {
				return opFacts{skip: skipNoName}
			}
			switch p.In {
			case "cookie":
				// toolgate sends no cookies: an optional one is left out,
				// a required one skips the operation.
				if p.Required {
					return opFacts{skip: skipCookie}
				}
				continue
			case "header":
				// OpenAPI says these headers are ignored.
				if n := strings.ToLower(p.Name); n == "accept" || n == "content-type" || n == "authorization" {
					continue
				}
			}
			params[key{p.In, p.Name}] = p
		}
	}
	for _, name := range placeholders(path) {
		if params[key{"path", name}] == nil {
			return opFacts{skip: skipPath}
		}
	}
	for k, p := range params {
		// toolgate requires every path parameter: no path without it.
		f.params = append(f.params, fmt.Sprintf("%s %s %v", k.in, k.name, p.Required || k.in == "path"))
	}
	slices.Sort(f.params)
	if op.RequestBody != nil && op.RequestBody.Value != nil && len(op.RequestBody.Value.Content) > 0 {
		rb := op.RequestBody.Value
		mt := kinJSONMedia(rb.Content)
		if mt == nil {
			return opFacts{skip: skipBody}
		}
		f.bodyRequired = rb.Required
		f.body = "value"
		if mt.Schema != nil && mt.Schema.Value != nil {
			s := mt.Schema.Value
			if kinIsObject(s) {
				f.body = "object"
				f.bodyProps = slices.Sorted(maps.Keys(s.Properties))
				f.bodyReq = slices.Sorted(slices.Values(s.Required))
			}
		}
	}
	f.output = kinOutput(op)
	return f
}

// kinJSONMedia is toolgate's choice of media type (application/json, else
// */*+json, else */*) over kin-openapi's content map.
func kinJSONMedia(content openapi3.Content) *openapi3.MediaType {
	var best *openapi3.MediaType
	bestRank := 0
	for _, k := range slices.Sorted(maps.Keys(content)) {
		if rank := mediaRank(k); rank > bestRank {
			best, bestRank = content[k], rank
			if best == nil {
				best = &openapi3.MediaType{}
			}
		}
	}
	return best
}

// kinIsObject: declared properties, nothing composing it, type object or
// none; a 3.0 nullable object is not (its type becomes [object, null]).
func kinIsObject(s *openapi3.Schema) bool {
	if s.Properties == nil || len(s.AllOf) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0 || s.Not != nil || s.If != nil {
		return false
	}
	return s.Type == nil || (s.Type.Is("object") && !s.Nullable)
}

// kinOutput: the first 2xx response (in code order) with a JSON schema
// decides. toolgate keeps it as the output schema only when it is an
// object (a tool's answer is an object), so that is what is compared:
// true when there is a 2xx JSON response schema and it is an object.
func kinOutput(op *openapi3.Operation) bool {
	if op.Responses == nil {
		return false
	}
	rs := op.Responses.Map()
	for _, code := range slices.Sorted(maps.Keys(rs)) {
		if !strings.HasPrefix(code, "2") || rs[code] == nil || rs[code].Value == nil {
			continue
		}
		mt := kinJSONMedia(rs[code].Value.Content)
		if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
			continue
		}
		s := mt.Schema.Value
		return s.Type.Is("object") && !s.Nullable
	}
	return false
}

// toolgateFacts loads the document with toolsource/openapi and reads the same
// facts back from its tools, before toolgate's renaming: an argument is
// taken by its placement (config.Param's In and Name), so a body property
// renamed body_<name> beside a parameter <name> counts as <name>.
func toolgateFacts(t *testing.T, path string) map[string]opFacts {
	t.Helper()
	doc := load(t, path)
	out := map[string]opFacts{}
	requiredInBody := map[string][]string{} // the body properties the input schema requires
	for _, it := range doc.Tools {
		var f opFacts
		key := it.Request.Method + " " + it.Request.Path
		required := map[string]bool{}
		if r, ok := it.InputSchema["required"].([]any); ok {
			for _, x := range r {
				required[x.(string)] = true
			}
		}
		for arg, p := range it.Request.Params {
			switch {
			case p.In != config.InBody:
				f.params = append(f.params, fmt.Sprintf("%s %s %v", p.In, p.Name, required[arg]))
			case p.Name == "":
				f.body, f.bodyRequired = "value", p.Required
			default:
				f.body, f.bodyRequired = "object", p.Required
				f.bodyProps = append(f.bodyProps, p.Name)
				if required[arg] {
					requiredInBody[key] = append(requiredInBody[key], p.Name)
				}
			}
		}
		slices.Sort(f.params)
		slices.Sort(f.bodyProps)
		slices.Sort(requiredInBody[key])
		f.output = it.OutputSchema != nil
		out[key] = f
	}
	// An optional body's required list is not in the input schema (none of
	// its properties is a required argument), so it is read before that
	// step: the body schema as toolsource/openapi resolves and converts it.
	// The input schema must then require exactly those of its properties
	// when the body is required, and none when it is not.
	for key, req := range toolgateBodyRequired(t, path) {
		f, ok := out[key]
		if !ok || f.body != "object" {
			continue
		}
		f.bodyReq = req
		var want []string
		if f.bodyRequired {
			for _, name := range req {
				if slices.Contains(f.bodyProps, name) {
					want = append(want, name)
				}
			}
		}
		if !slices.Equal(requiredInBody[key], want) {
			f.bodyReq = append(slices.Clone(req), fmt.Sprintf("but the input schema requires %q", requiredInBody[key]))
		}
		out[key] = f
	}
	return withSkipped(t, out, doc.Report.Skipped)
}

// withSkipped adds the report's skipped operations, by the kind of reason.
func withSkipped(t *testing.T, out map[string]opFacts, skipped []Skipped) map[string]opFacts {
	t.Helper()
	kinds := []string{skipMethod, skipCookie, skipBody, skipPath, skipNoName, skipClashes}
	for _, s := range skipped {
		kind := "unknown: " + s.Why
		for _, k := range kinds {
			if strings.Contains(s.Why, k) {
				kind = k
			}
		}
		out[s.Operation] = opFacts{skip: kind}
	}
	return out
}

// toolgateBodyRequired reads each operation's JSON request body with
// toolsource/openapi's reader and converter: the required list of the body
// schema, by "METHOD path".
func toolgateBodyRequired(t *testing.T, path string) map[string][]string {
	t.Helper()
	r := &reader{client: http.DefaultClient, docs: map[string]any{}}
	root, err := absLocation(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.preload(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	c := newConverter(r)
	paths, _ := r.docs[root].(map[string]any)["paths"].(map[string]any)
	out := map[string][]string{}
	for p, raw := range paths {
		item, base, err := r.deref(root, raw)
		if err != nil {
			continue
		}
		for _, m := range methods {
			op, ok := item[m].(map[string]any)
			if !ok || op["requestBody"] == nil {
				continue
			}
			rb, rbBase, err := r.deref(base, op["requestBody"])
			if err != nil {
				continue
			}
			content, _ := rb["content"].(map[string]any)
			mt := jsonMedia(content)
			if mt == nil {
				continue
			}
			s, _ := c.convert(rbBase, mt["schema"]).(map[string]any)
			var req []string
			list, _ := s["required"].([]any)
			for _, x := range list {
				req = append(req, x.(string))
			}
			slices.Sort(req)
			out[strings.ToUpper(m)+" "+p] = req
		}
	}
	return out
}

// diffDocument compares every operation of the document at path.
func diffDocument(t *testing.T, path string) {
	t.Helper()
	want, byID := kinFacts(t, path)
	got := toolgateFacts(t, path)
	// Skipped operations are reported by label: operationId when there is
	// one. Map those back to "METHOD path".
	for label, f := range got {
		if key, ok := byID[label]; ok {
			delete(got, label)
			got[key] = f
		}
	}
	for _, key := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[key]
		if !ok {
			t.Errorf("%s: kin-openapi reads it, toolsource/openapi has no tool or skip for it (kin: %v)", key, want[key])
			continue
		}
		if g.String() != want[key].String() {
			t.Errorf("%s:\n toolsource/openapi %v\n kin-openapi    %v", key, g, want[key])
		}
	}
	for _, key := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[key]; !ok {
			t.Errorf("%s: toolsource/openapi has it (%v), kin-openapi does not", key, got[key])
		}
	}
	if len(want) == 0 {
		t.Fatal("no operations")
	}
	if !t.Failed() {
		t.Logf("%s: %d operations agree", filepath.Base(path), len(want))
	}
}

// TestKinOpenAPIAgrees: on every document the tests have, toolsource/openapi
// and kin-openapi see the same operations, parameters, bodies and
// answers.
func TestKinOpenAPIAgrees(t *testing.T) {
	tests := []struct{ name, path string }{
		{"petstore 3.0 YAML with refs into another file", filepath.Join("..", "..", "testdata", "openapi", "petstore", "petstore.yaml")},
		{"3.1 JSON with refs into another directory", filepath.Join("testdata", "v31", "api.json")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { diffDocument(t, tt.path) })
	}
}

// TestKinOpenAPIAgreesOnGitHub: the same on GitHub's description (1,223
// operations). Both read a copy without its prose and examples (about
// half of its bytes, none of what is compared). Under the race detector,
// where kin-openapi alone takes over 10 s on it, the copy keeps every
// githubSample-th path and the components those reach: each run still
// compares about 300 of GitHub's operations.
func TestKinOpenAPIAgreesOnGitHub(t *testing.T) {
	every := 1
	if raceEnabled {
		every = githubSample
	}
	diffDocument(t, withoutProse(t, githubDescription(t), every))
}

// githubSample: one path in githubSample is compared under the race
// detector.
const githubSample = 4

// withoutProse writes a copy of the JSON document at path, in a temporary
// directory, without description, summary, example and examples (except
// as names), keeping one path in every (in key order) and the components
// that the kept paths reach.
func withoutProse(t *testing.T, path string, every int) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	doc = stripProse(doc, false).(map[string]any)
	if every > 1 {
		doc = samplePaths(doc, every)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// samplePaths keeps one path of doc in every, and only the components
// ("#/components/<section>/<name>") that those reach, transitively.
func samplePaths(doc map[string]any, every int) map[string]any {
	paths, _ := doc["paths"].(map[string]any)
	kept := map[string]any{}
	for i, p := range slices.Sorted(maps.Keys(paths)) {
		if i%every == 0 {
			kept[p] = paths[p]
		}
	}
	components, _ := doc["components"].(map[string]any)
	reached := map[string]map[string]any{}
	queue := []any{kept}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		walkRefs(v, func(ref string) {
			section, name, ok := strings.Cut(strings.TrimPrefix(ref, "#/components/"), "/")
			if !ok || !strings.HasPrefix(ref, "#/components/") {
				return
			}
			name, _, _ = strings.Cut(name, "/")
			all, _ := components[section].(map[string]any)
			if reached[section] == nil {
				reached[section] = map[string]any{}
			}
			if _, done := reached[section][name]; done || all[name] == nil {
				return
			}
			reached[section][name] = all[name]
			queue = append(queue, all[name])
		})
	}
	out := maps.Clone(doc)
	out["paths"] = kept
	c := map[string]any{}
	for section, m := range reached {
		c[section] = m
	}
	out["components"] = c
	return out
}

// inComponents are the sections of components, whose keys are names.
// (A keyword of the same name, such as an operation's parameters, holds
// a list, where names do not matter.)
var inComponents = map[string]bool{"schemas": true, "parameters": true, "responses": true, "requestBodies": true, "headers": true, "securitySchemes": true, "links": true, "callbacks": true, "pathItems": true}

// prose are the keys withoutProse leaves out.
var prose = map[string]bool{"description": true, "summary": true, "example": true, "examples": true}

// stripProse drops the prose keys of v; names says v's keys are names
// (of properties, or of components), not keywords.
func stripProse(v any, names bool) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if !names && prose[k] {
				continue
			}
			out[k] = stripProse(x, !names && (k == "properties" || k == "patternProperties" || k == "components" || inComponents[k]))
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = stripProse(x, false)
		}
		return out
	}
	return v
}
