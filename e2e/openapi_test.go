package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/types"
)

// TestOpenAPIOnTheBinary: toolgate serve imports the Petstore document
// of testdata/openapi, lists its operations as tools in every format, and
// a call goes out as the document places it; an enum violation is refused
// with nothing sent.
func TestOpenAPIOnTheBinary(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, strings.TrimSpace(r.Method+" "+r.RequestURI+" "+string(b)))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"p1","name":"Rex","pets":[]}`))
	}))
	defer fake.Close()
	document, err := filepath.Abs(filepath.Join("..", "testdata", "openapi", "petstore", "petstore.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, `store: sqlite:toolgate.db
dependencies:
  petstore:
    base_url: `+fake.URL+`/api
    openapi: `+document+`
    import: {operations: ["*Pet*"], prefix: "shop_"}
tools:
  shop_createPet: {timeout: {read: 2s}}
`)
	want := []string{"shop_adoptPet", "shop_createPet", "shop_deletePet", "shop_listPets", "shop_showPetById"}
	for _, format := range []string{"", "openai", "anthropic", "mcp"} {
		if got := listedTools(t, srv, "", format); !slices.Equal(got, want) {
			t.Errorf("GET /v1/tools?format=%s: %v, want %v", format, got, want)
		}
	}
	if a := srv.post("/v1/runs", "", `{"run_id":"pets","principal":{"id":"u1"}}`); a.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", a.status, a.body)
	}
	if res := srv.call("pets", "", "shop_listPets", `{"status":"pending","limit":3}`); !res.OK {
		t.Fatalf("shop_listPets: %s %s", res.Code(), res.Observation)
	}
	if res := srv.call("pets", "", "shop_createPet", `{"name":"Rex","tag":null}`); !res.OK {
		t.Fatalf("shop_createPet: %s %s", res.Code(), res.Observation)
	}
	if res := srv.call("pets", "", "shop_listPets", `{"status":"lost"}`); res.Code() != types.CodeInvalidArgument {
		t.Errorf("status lost: %s %s, want invalid_argument", res.Code(), res.Observation)
	}
	mu.Lock()
	defer mu.Unlock()
	if w := []string{"GET /api/pets?limit=3&status=pending", `POST /api/pets {"name":"Rex","tag":null}`}; !slices.Equal(seen, w) {
		t.Errorf("the fake saw %q, want %q", seen, w)
	}
}
