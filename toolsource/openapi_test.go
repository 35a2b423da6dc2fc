package toolsource_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// petstore is a fake of the API testdata/openapi/petstore describes, on
// 127.0.0.1: it records every request, and plan (when set) answers a
// request instead of the default 200 with a Pet; it returns false to
// fall through to the default.
type petstore struct {
	mu       sync.Mutex
	requests []string // "METHOD URI BODY"
	headers  []http.Header
	plan     func(n int, w http.ResponseWriter, r *http.Request) bool
}

func (p *petstore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.requests = append(p.requests, strings.TrimSpace(r.Method+" "+r.RequestURI+" "+string(b)))
	p.headers = append(p.headers, r.Header.Clone())
	n, plan := len(p.requests), p.plan
	p.mu.Unlock()
	if plan != nil && plan(n, w, r) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"id":"p1","name":"Rex"}`)) // a Pet: what the document's output schemas ask
}

func (p *petstore) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

func (p *petstore) reset(plan func(int, http.ResponseWriter, *http.Request) bool) {
	p.mu.Lock()
	p.requests, p.headers, p.plan = nil, nil, plan
	p.mu.Unlock()
}

// openPetstore opens a gateway on testdata/openapi/petstore's config
// with the base URL of a fresh fake.
func openPetstore(t *testing.T) (*toolgate.Gateway, *petstore, string) {
	t.Helper()
	fake := &petstore{}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	path := filepath.Join("..", "testdata", "openapi", "petstore", "toolgate.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"PETSTORE_URL": srv.URL, "PETSTORE_TOKEN": "tok"}
	cfg, err := config.Parse(raw, path, func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := toolgate.Open(t.Context(), toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	run, err := gw.StartRun(t.Context(), toolgate.RunOptions{Principal: types.Principal{ID: "u1"}})
	if err != nil {
		t.Fatal(err)
	}
	return gw, fake, run.ID
}

// hang holds the request until the client gives up on it.
func hang(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

func TestOpenAPIPetstoreImported(t *testing.T) {
	gw, _, _ := openPetstore(t)
	cfg := gw.Config()
	tests := []struct {
		tool   string
		effect types.Effect
		source string
	}{
		{"listPets", types.EffectRead, "listPets"},
		{"createPet", types.EffectWrite, "createPet"},
		{"deletePet", types.EffectIdempotent, "deletePet"},
		{"adoptPet", types.EffectWrite, "adoptPet"},
		{"put_pets_petId_tag", types.EffectIdempotent, "put_pets_petId_tag"},
		{"showPetById", types.EffectWrite, "showPetById"}, // the config's effect wins over GET
	}
	for _, tt := range tests {
		tool := cfg.Tools[tt.tool]
		if tool == nil {
			t.Errorf("no tool %s; have %v", tt.tool, cfg.ToolNames())
			continue
		}
		if tool.Effect != tt.effect {
			t.Errorf("%s: effect %s, want %s", tt.tool, tool.Effect, tt.effect)
		}
		if tool.Source == nil || tool.Source.Kind != config.SourceOpenAPI || tool.Source.Name != tt.source || tool.Source.Dependency != "petstore" {
			t.Errorf("%s: source %+v", tt.tool, tool.Source)
		}
	}
	if cfg.Tools["uploadPhoto"] != nil {
		t.Error("uploadPhoto has an image/png body: it must be skipped, not imported")
	}
	if got := cfg.Tools["createPet"].Description; got != "Add a pet; the store honours Idempotency-Key." {
		t.Errorf("the config's description must win, got %q", got)
	}
	if got := cfg.Tools["listPets"].Description; got != "List the pets of the store." {
		t.Errorf("the document's summary is the description, got %q", got)
	}
	tag := cfg.Tools["put_pets_petId_tag"].Request.Params
	if tag["body_petId"] != (config.Param{In: config.InBody, Name: "petId", Required: true}) || tag["petId"].In != config.InPath {
		t.Errorf("a body property clashing with a parameter becomes body_<name>: %+v", tag)
	}
	if out := cfg.Tools["showPetById"].OutputSchema; out == nil || out["type"] != "object" {
		t.Errorf("the 2xx response schema is the output schema: %v", out)
	}
}

func TestOpenAPICallsPlacedByTheDocument(t *testing.T) {
	gw, fake, run := openPetstore(t)
	ctx := t.Context()
	tests := []struct {
		tool string
		args map[string]any
		want string // the request the fake saw
	}{
		{"listPets", map[string]any{"status": "sold", "limit": 2}, "GET /api/pets?limit=2&status=sold"},
		{"createPet", map[string]any{"name": "Rex", "status": "available"}, `POST /api/pets {"name":"Rex","status":"available"}`},
		{"showPetById", map[string]any{"petId": "p/1"}, "GET /api/pets/p%2F1"},
		{"put_pets_petId_tag", map[string]any{"petId": "p1", "dryRun": true, "tag": "good", "body_petId": "p2"},
			`PUT /api/pets/p1/tag?dryRun=true {"petId":"p2","tag":"good"}`},
	}
	for _, tt := range tests {
		fake.reset(nil)
		res, err := gw.Call(ctx, run, tt.tool, tt.args)
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK {
			t.Errorf("%s: %s: %s", tt.tool, res.Code(), res.Observation)
			continue
		}
		if got := fake.seen(); len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s: the fake saw %q, want %q", tt.tool, got, tt.want)
		}
	}
	if h := fake.headers[0]; h.Get("Authorization") != "Bearer tok" {
		t.Errorf("the dependency's headers are the credentials: %v", h)
	}

	fake.reset(nil)
	res, _ := gw.Call(ctx, run, "listPets", map[string]any{"status": "lost"})
	if res.Code() != types.CodeInvalidArgument {
		t.Errorf("status outside the enum: %s (%s), want invalid_argument", res.Code(), res.Observation)
	}
	res, _ = gw.Call(ctx, run, "showPetById", map[string]any{"petId": ".."})
	if res.Code() != types.CodeInvalidArgument {
		t.Errorf("petId ..: %s (%s), want invalid_argument", res.Code(), res.Observation)
	}
	if got := fake.seen(); len(got) != 0 {
		t.Errorf("refused calls sent %q", got)
	}
}

func TestOpenAPIEffectsFromMethods(t *testing.T) {
	gw, fake, run := openPetstore(t)
	ctx := t.Context()
	first := func(status int) func(int, http.ResponseWriter, *http.Request) bool {
		return func(n int, w http.ResponseWriter, r *http.Request) bool {
			if n > 1 {
				return false
			}
			if status == 0 {
				hang(w, r)
			} else {
				w.WriteHeader(status)
			}
			return true
		}
	}
	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		plan     func(int, http.ResponseWriter, *http.Request) bool
		sent     int
		ok       bool
		code     types.Code
		checkKey bool
	}{
		{"a read is retried after a read timeout", "listPets", nil, first(0), 2, true, "", false},
		{"a POST is not sent again after a read timeout", "adoptPet", map[string]any{"petId": "p1"}, first(0), 1, false, types.CodeTimeoutUnknownOutcome, false},
		{"a DELETE is retried on 503", "deletePet", map[string]any{"petId": "p1"}, first(503), 2, true, "", false},
		{"a DELETE is retried on 502", "deletePet", map[string]any{"petId": "p2"}, first(502), 2, true, "", false},
		{"a POST is not retried on 502", "adoptPet", map[string]any{"petId": "p3"}, first(502), 1, false, types.CodeUpstreamError, false},
		{"a GET made a write by the config is not retried on 502", "showPetById", map[string]any{"petId": "p4"}, first(502), 1, false, types.CodeUpstreamError, false},
		{"an override's idempotency header makes a POST safe to retry", "createPet", map[string]any{"name": "Rex"}, first(0), 2, true, "", true},
	}
	for _, tt := range tests {
		fake.reset(tt.plan)
		res, err := gw.Call(ctx, run, tt.tool, tt.args)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(fake.seen()); got != tt.sent || res.OK != tt.ok || (!tt.ok && res.Code() != tt.code) {
			t.Errorf("%s: sent %d, ok %v %s (%s); want sent %d, ok %v %s", tt.name, got, res.OK, res.Code(), res.Observation, tt.sent, tt.ok, tt.code)
		}
		if tt.checkKey {
			fake.mu.Lock()
			k1, k2 := fake.headers[0].Get("Idempotency-Key"), fake.headers[1].Get("Idempotency-Key")
			fake.mu.Unlock()
			if k1 == "" || k1 != k2 {
				t.Errorf("%s: Idempotency-Key %q then %q, want the same key on both", tt.name, k1, k2)
			}
		}
	}
}

func TestOpenAPIUnknownOperationKeepsTheGatewayClosed(t *testing.T) {
	path := filepath.Join("..", "testdata", "openapi", "petstore", "toolgate.yaml")
	raw, _ := os.ReadFile(path)
	raw = []byte(strings.Replace(string(raw), `import: {operations: ["*"]}`, `import: {operations: ["listPets", "listPotatoes"]}`, 1))
	raw = []byte(strings.Split(string(raw), "\ntools:")[0])
	cfg, err := config.Parse(raw, path, func(k string) (string, bool) { return "http://127.0.0.1:1", true })
	if err != nil {
		t.Fatal(err)
	}
	_, err = toolgate.Open(t.Context(), toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err == nil || !strings.Contains(err.Error(), `no operation "listPotatoes"`) {
		t.Fatalf("want the unknown operation named, got %v", err)
	}
}

// TestOpenAPIReload: a reload reads the document again under the new
// import; a reload whose overrides name an operation no longer imported
// is refused and the running tools stay.
func TestOpenAPIReload(t *testing.T) {
	gw, fake, run := openPetstore(t)
	path := filepath.Join("..", "testdata", "openapi", "petstore", "toolgate.yaml")
	raw, _ := os.ReadFile(path)
	vars := func(k string) (string, bool) {
		return map[string]string{"PETSTORE_URL": "http://127.0.0.1:1", "PETSTORE_TOKEN": "t"}[k], true
	}
	parse := func(yaml string) *config.Config {
		t.Helper()
		cfg, err := config.Parse([]byte(yaml), path, vars)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	narrowed := strings.Replace(string(raw), `import: {operations: ["*"]}`, `import: {operations: ["listPets"]}`, 1)
	if _, err := gw.Reload(parse(narrowed)); err == nil || !strings.Contains(err.Error(), "tools.adoptPet: names no declared tool") {
		t.Fatalf("overrides of operations no longer imported: want refused, got %v", err)
	}
	if gw.Config().Tools["adoptPet"] == nil {
		t.Fatal("a refused reload changed the tools")
	}
	if _, err := gw.Reload(parse(strings.Split(narrowed, "\ntools:")[0])); err != nil {
		t.Fatal(err)
	}
	if got := gw.Config().ToolNames(); len(got) != 1 || got[0] != "listPets" {
		t.Errorf("after the reload: %v, want [listPets]", got)
	}
	if res, _ := gw.Call(t.Context(), run, "adoptPet", map[string]any{"petId": "p1"}); res.Code() != types.CodeUnknownTool {
		t.Errorf("adoptPet after the reload: %s", res.Code())
	}
	if len(fake.seen()) != 0 {
		t.Errorf("sent %q", fake.seen())
	}
}

// TestOpenAPIOutputSchema: an answer whose types break the document's
// response schema is invalid_output; a missing field is not (the imported
// schema drops required); output_schema: {} under tools: checks nothing.
func TestOpenAPIOutputSchema(t *testing.T) {
	gw, fake, run := openPetstore(t)
	answer := func(body string) func(int, http.ResponseWriter, *http.Request) bool {
		return func(_ int, w http.ResponseWriter, _ *http.Request) bool {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
			return true
		}
	}
	tests := []struct {
		name, tool string
		args       map[string]any
		body       string
		code       types.Code
	}{
		{"no 2xx JSON schema", "deletePet", map[string]any{"petId": "p1"}, `{"id":5}`, ""},
		{"a field missing", "listPets", nil, `{"pets":[{"name":"Rex"}]}`, ""},
		{"a field of the wrong type", "listPets", nil, `{"pets":[{"id":5,"name":"Rex"}]}`, types.CodeInvalidOutput},
	}
	for _, tt := range tests {
		fake.reset(answer(tt.body))
		res, err := gw.Call(t.Context(), run, tt.tool, tt.args)
		if err != nil {
			t.Fatal(err)
		}
		if (tt.code == "" && !res.OK) || (tt.code != "" && res.Code() != tt.code) {
			t.Errorf("%s: %s %s, want %q", tt.name, res.Code(), res.Observation, tt.code)
		}
	}

	// output_schema: {} under tools: turns the check off.
	path := filepath.Join("..", "testdata", "openapi", "petstore", "toolgate.yaml")
	raw, _ := os.ReadFile(path)
	vars := map[string]string{"PETSTORE_URL": strings.TrimSuffix(gw.Config().Dependencies["petstore"].BaseURL, "/api"), "PETSTORE_TOKEN": "tok"}
	cfg, err := config.Parse([]byte(strings.Replace(string(raw), "  listPets:\n", "  listPets:\n    output_schema: {}\n", 1)), path,
		func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gw.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	fake.reset(answer(`{"pets":[{"id":5}]}`))
	if res, _ := gw.Call(t.Context(), run, "listPets", nil); !res.OK {
		t.Errorf("with output_schema: {}: %s %s", res.Code(), res.Observation)
	}
}
