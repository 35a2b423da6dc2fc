package mcpcall_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
)

// TestRedirectKeepsCredentials: an MCP server that answers 307 to another
// host does not get toolgate to send it anything, least of all the
// configured Authorization header; the import fails instead.
func TestRedirectKeepsCredentials(t *testing.T) {
	var reached, leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	text := "store: memory\ndependencies:\n  r:\n    mcp: {url: " + strconv.Quote(redirect.URL+"/mcp") +
		", headers: {Authorization: \"Bearer upstream-secret\"}}\n    import: {tools: [\"*\"]}\n"
	cfg, err := config.Parse([]byte(text), "toolgate.yaml", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		gw.Close()
		t.Fatal("the import followed the redirect")
	}
	if reached.Load() != 0 || leaked.Load() != 0 {
		t.Fatalf("the other host got %d requests, %d with the Authorization header", reached.Load(), leaked.Load())
	}
}
