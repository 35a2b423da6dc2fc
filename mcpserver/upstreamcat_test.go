package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/internal/testsupport/mcptest"
	"github.com/toolgate/toolgate/mcpserver"
	"github.com/toolgate/toolgate/types"
)

const (
	adminKey  = "admin-key-0123456789"
	readerKey = "reader-key-0123456789"
)

// catalogueFixture serves mcptest.Catalogue on 127.0.0.1 and opens a
// gateway importing it (testdata/catalogue.yaml), with its MCP endpoint.
func catalogueFixture(t *testing.T) (*mcptest.Catalogue, *toolgate.Gateway, string) {
	t.Helper()
	fx := mcptest.NewCatalogue()
	up := httptest.NewServer(fx.Handler())
	t.Cleanup(func() { fx.CloseSessions(); up.Close() })
	raw, err := os.ReadFile("testdata/catalogue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	gw := gateway(t, strings.ReplaceAll(string(raw), "CAT_URL", up.URL))
	_, url := httpEndpoint(t, gw, mcpserver.Options{})
	return fx, gw, url
}

// catalogueClient connects to toolgate's endpoint with a key and the
// handlers of the catalogue's notifications.
func catalogueClient(t *testing.T, url, key string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	rt := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(rt.CloseIdleConnections)
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{key: key, base: rt}}},
		// A session: subscriptions belong to one.
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestImportedCatalogueServed: the resources, template and prompts an
// import selects are listed and served through toolgate (names with the
// prefix, URIs as the server gives them), prompts/get passes its
// arguments, completion reaches the server under the names it knows, and
// each read is one execution row.
func TestImportedCatalogueServed(t *testing.T) {
	fx, gw, url := catalogueFixture(t)
	cs := catalogueClient(t, url, adminKey, nil)
	ctx := context.Background()

	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris, names []string
	for _, r := range res.Resources {
		uris, names = append(uris, r.URI), append(names, r.Name)
	}
	if want := []string{mcptest.BrokenURI, mcptest.ReadmeURI, mcptest.SecretURI}; !slices.Equal(uris, want) {
		t.Errorf("resources %v, want %v", uris, want)
	}
	if want := []string{"cat_broken", "cat_readme", "cat_secret"}; !slices.Equal(names, want) {
		t.Errorf("resource names %v, want the prefixed %v", names, want)
	}
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != mcptest.OrderTmpl || tmpl.ResourceTemplates[0].Name != "cat_order" {
		t.Fatalf("templates %+v, %v", tmpl, err)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcptest.ReadmeURI})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "# Read me\nThe docs." {
		t.Fatalf("read readme: %+v, %v", read, err)
	}
	read, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://orders/ORD-9"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != `{"order_id":"ORD-9"}` {
		t.Fatalf("read through the template: %+v, %v", read, err)
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var pnames []string
	for _, p := range prompts.Prompts {
		pnames = append(pnames, p.Name)
	}
	if want := []string{"cat_audit", "cat_greeting"}; !slices.Equal(pnames, want) {
		t.Errorf("prompts %v, want %v", pnames, want)
	}
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "cat_greeting", Arguments: map[string]string{"name": "Ada"}})
	if err != nil || len(got.Messages) != 1 || got.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Ada!" {
		t.Fatalf("prompts/get: %+v, %v", got, err)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "cat_greeting"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "Al"}})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"Alice", "Albert"}) {
		t.Fatalf("complete a prompt argument: %+v, %v", comp, err)
	}
	comp, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: mcptest.OrderTmpl},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "ORD"}})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"ORD-1", "ORD-2"}) {
		t.Fatalf("complete a template variable: %+v, %v", comp, err)
	}
	if reads := fx.Reads(); !slices.Equal(reads, []string{mcptest.ReadmeURI, "test://orders/ORD-9"}) {
		t.Errorf("the server was read %v", reads)
	}

	rows, err := gw.Store().ListExecutions(ctx, types.ExecutionFilter{Ascending: true, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, r := range rows {
		tools = append(tools, r.Tool)
		if !r.OK || r.Dependency != "cat" || r.Step == 0 {
			t.Errorf("row %s: ok %v, dependency %q, step %d", r.Tool, r.OK, r.Dependency, r.Step)
		}
	}
	want := []string{"resources/read", "resources/read", "prompts/get", "completion/complete", "completion/complete"}
	if !slices.Equal(tools, want) {
		t.Errorf("execution rows %v, want %v", tools, want)
	}
}

// TestCataloguePerKey: a key sees and reads only the resources, templates
// and prompts its lists name; the others are not found, and nothing is
// sent to the server for them.
func TestCataloguePerKey(t *testing.T) {
	fx, _, url := catalogueFixture(t)
	cs := catalogueClient(t, url, readerKey, nil)
	ctx := context.Background()

	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 1 || res.Resources[0].URI != mcptest.ReadmeURI {
		t.Fatalf("the reader lists %+v, %v; want only the readme", res, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcptest.SecretURI}); err == nil {
		t.Fatal("the reader read a resource outside its list")
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://orders/ORD-1"}); err != nil {
		t.Fatalf("the reader's template: %v", err)
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "cat_greeting" {
		t.Fatalf("the reader lists prompts %+v, %v", prompts, err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "cat_audit"}); err == nil {
		t.Fatal("the reader got a prompt outside its list")
	}
	if _, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "cat_audit"},
		Argument: mcp.CompleteParamsArgument{Name: "x", Value: ""}}); err == nil {
		t.Fatal("the reader completed a prompt outside its list")
	}
	if reads := fx.Reads(); !slices.Equal(reads, []string{"test://orders/ORD-1"}) {
		t.Errorf("the server was read %v", reads)
	}
}

// TestResourceSubscriptionRelayed: resources/subscribe of two sessions
// reaches the server once, its notifications/resources/updated reaches
// both, and only the last unsubscribe reaches the server; a new resource
// at the server reaches the client as resources/list_changed.
func TestResourceSubscriptionRelayed(t *testing.T) {
	fx, _, url := catalogueFixture(t)
	updated := make(chan string, 4)
	listChanged := make(chan struct{}, 4)
	cs := catalogueClient(t, url, adminKey, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- "a " + r.Params.URI },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			listChanged <- struct{}{}
		}})
	other := catalogueClient(t, url, adminKey, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- "b " + r.Params.URI }})
	ctx := context.Background()
	if !cs.InitializeResult().Capabilities.Resources.Subscribe {
		t.Fatal("toolgate does not advertise resource subscriptions")
	}
	for _, c := range []*mcp.ClientSession{cs, cs, other} {
		if err := c.Subscribe(ctx, &mcp.SubscribeParams{URI: mcptest.ReadmeURI}); err != nil {
			t.Fatal(err)
		}
	}
	if n := fx.Subscribed(mcptest.ReadmeURI); n != 1 {
		t.Fatalf("the server holds %d subscriptions, want 1", n)
	}
	fx.Updated(mcptest.ReadmeURI)
	got := []string{<-updated, <-updated}
	slices.Sort(got)
	if want := []string{"a " + mcptest.ReadmeURI, "b " + mcptest.ReadmeURI}; !slices.Equal(got, want) {
		t.Fatalf("updates %v, want %v", got, want)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: mcptest.ReadmeURI}); err != nil {
		t.Fatal(err)
	}
	if n := fx.Subscribed(mcptest.ReadmeURI); n != 1 {
		t.Fatalf("after one of two sessions unsubscribed the server holds %d subscriptions, want 1", n)
	}
	if err := other.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: mcptest.ReadmeURI}); err != nil {
		t.Fatal(err)
	}
	if n := fx.Subscribed(mcptest.ReadmeURI); n != 0 {
		t.Fatalf("after the last unsubscribe the server holds %d subscriptions", n)
	}

	fx.AddText("test://docs/new", "new", "fresh")
	<-listChanged
	for {
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(res.Resources, func(r *mcp.Resource) bool { return r.URI == "test://docs/new" }) {
			break
		}
		<-listChanged // the list toolgate serves changes after the notification it relays
	}
}

// TestCatalogueBreaker: reads that fail at the server count against its
// circuit breaker; once open, a read is refused without reaching the
// server, recorded as circuit_open.
func TestCatalogueBreaker(t *testing.T) {
	fx, gw, url := catalogueFixture(t)
	cs := catalogueClient(t, url, adminKey, nil)
	ctx := context.Background()
	for range 2 {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcptest.BrokenURI}); err == nil || !strings.Contains(err.Error(), "the disk is on fire") {
			t.Fatalf("a failing read: want the server's error relayed, got %v", err)
		}
	}
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcptest.ReadmeURI})
	if err == nil || !strings.Contains(err.Error(), "temporarily unavailable") {
		t.Fatalf("a read with the breaker open: %v", err)
	}
	if reads := fx.Reads(); !slices.Equal(reads, []string{mcptest.BrokenURI, mcptest.BrokenURI}) {
		t.Errorf("the server was read %v", reads)
	}
	rows, err := gw.Store().ListExecutions(ctx, types.ExecutionFilter{Ascending: true, Limit: 100})
	if err != nil || len(rows) != 3 || rows[2].Code != types.CodeCircuitOpen || rows[0].Code != types.CodeUpstreamError {
		t.Fatalf("rows %+v, %v", rows, err)
	}
}

// TestImportedCatalogueOverStdio: `toolgate mcp` (the real binary) serves
// the imported resources and prompts its --key sees.
func TestImportedCatalogueOverStdio(t *testing.T) {
	fx := mcptest.NewCatalogue()
	up := httptest.NewServer(fx.Handler())
	t.Cleanup(func() { fx.CloseSessions(); up.Close() })
	raw, err := os.ReadFile("testdata/catalogue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cs := connectStdio(t, writeConfig(t, strings.ReplaceAll(string(raw), "CAT_URL", up.URL)), "--key", "reader")
	ctx := context.Background()
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 1 || res.Resources[0].URI != mcptest.ReadmeURI {
		t.Fatalf("resources over stdio: %+v, %v", res, err)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcptest.ReadmeURI})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "# Read me\nThe docs." {
		t.Fatalf("read over stdio: %+v, %v", read, err)
	}
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "cat_greeting", Arguments: map[string]string{"name": "Lin"}})
	if err != nil || got.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Lin!" {
		t.Fatalf("prompts/get over stdio: %+v, %v", got, err)
	}
}
