package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"go.uber.org/goleak"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/server"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scriptedModel is a fake Messages API: it answers request n with
// replies[n] and keeps every request body.
type scriptedModel struct {
	t       *testing.T
	replies []string
	mu      sync.Mutex
	seen    []messagesRequest
}

// messagesRequest is the part of a Messages API request the test reads.
type messagesRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		http.Error(w, "not the Messages API: "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	var req messagesRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	n := len(m.seen)
	m.seen = append(m.seen, req)
	m.mu.Unlock()
	if n >= len(m.replies) {
		http.Error(w, fmt.Sprintf("the script has %d replies; this is request %d", len(m.replies), n+1), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, m.replies[n])
}

func (m *scriptedModel) requests() []messagesRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]messagesRequest(nil), m.seen...)
}

// reply is a Messages API response with the given content blocks.
func reply(id, stop string, blocks ...string) string {
	return fmt.Sprintf(`{"id":%q,"type":"message","role":"assistant","model":"claude-test","content":[%s],`+
		`"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":120,"output_tokens":30}}`, id, strings.Join(blocks, ","), stop)
}

func toolUse(id, name, input string) string {
	return fmt.Sprintf(`{"type":"tool_use","id":%q,"name":%q,"input":%s}`, id, name, input)
}

// toolResult finds the tool_result for a tool_use id in the last message of
// a request and returns its text and is_error.
func toolResult(t *testing.T, req messagesRequest, id string) (string, bool) {
	t.Helper()
	last := req.Messages[len(req.Messages)-1]
	for _, raw := range last.Content {
		var b struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(raw, &b) != nil || b.Type != "tool_result" || b.ToolUseID != id {
			continue
		}
		var text string
		if json.Unmarshal(b.Content, &text) == nil {
			return text, b.IsError
		}
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(b.Content, &parts)
		for _, p := range parts {
			text += p.Text
		}
		return text, b.IsError
	}
	t.Fatalf("no tool_result for %s in the last message: %s", id, last.Content)
	return "", false
}

// TestAgentActsOnTheObservationAfterATimeout runs the loop against a
// scripted model, toolgate's HTTP API and a provider that never answers the
// refund in time: the model's next request carries toolgate's observation,
// which says the refund may have happened, that list_refunds did not show it
// yet, and not to issue it again; the model checks with list_refunds instead
// of refunding again.
func TestAgentActsOnTheObservationAfterATimeout(t *testing.T) {
	// The provider holds the first refund until the test ends: it arrives,
	// and is made, after toolgate has stopped waiting.
	release := make(chan struct{})
	p := sim.NewPayments(sim.Order{OrderID: "ORD-4471", CustomerID: "cust_42", AmountPaise: 500000})
	p.Hold = func(n int) <-chan struct{} {
		if n == 0 {
			return release
		}
		return nil
	}
	provider := httptest.NewServer(p)
	t.Cleanup(provider.Close)
	t.Cleanup(func() { close(release) }) // runs first

	// toolgate: the example's config, pointed at this provider, with a short
	// read timeout on the refund (the hold guarantees it expires).
	t.Setenv("TOOLGATE_KEY", "agent-test-key-0123456789")
	cfg, err := config.Load("../refunds/toolgate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store = "memory"
	cfg.Dependencies["payments"].BaseURL = provider.URL
	cfg.Tools["issue_refund"].Timeout.Read = config.Duration(50 * time.Millisecond)
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	srv, err := server.New(server.Options{Gateway: gw, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	tg := httptest.NewServer(srv.Handler())
	t.Cleanup(tg.Close)

	model := &scriptedModel{t: t, replies: []string{
		reply("msg_1", "tool_use", `{"type":"text","text":"Refunding the order."}`,
			toolUse("toolu_1", "issue_refund", `{"order_id":"ORD-4471","amount_paise":425000,"reason":"damaged in transit"}`)),
		reply("msg_2", "tool_use", toolUse("toolu_2", "list_refunds", `{"order_id":"ORD-4471"}`)),
		reply("msg_3", "end_turn", `{"type":"text","text":"The refund may still be processing; I have asked a person to check."}`),
	}}
	fake := httptest.NewServer(model)
	t.Cleanup(fake.Close)

	modelHTTP := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	toolgateHTTP := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(modelHTTP.CloseIdleConnections)
	t.Cleanup(toolgateHTTP.CloseIdleConnections)
	var transcript strings.Builder
	err = Run(context.Background(), Config{
		Toolgate: Toolgate{BaseURL: tg.URL, Key: "agent-test-key-0123456789", HTTP: toolgateHTTP},
		ModelOptions: []option.RequestOption{option.WithBaseURL(fake.URL), option.WithAPIKey("test"),
			option.WithMaxRetries(0), option.WithHTTPClient(modelHTTP)},
		Model: "claude-test", System: "test", Prompt: "Refund ORD-4471: 425000 paise.",
		Principal: map[string]any{"id": "cust_42", "permissions": []string{"refunds:write"},
			"limits": map[string]any{"max_refund_paise": 500000}},
		State:    map[string]any{"refunded_paise": 0},
		MaxTurns: 5,
		Out:      &transcript,
	})
	t.Log("\n" + transcript.String())
	if err != nil {
		t.Fatal(err)
	}

	reqs := model.requests()
	if len(reqs) != 3 {
		t.Fatalf("the model got %d requests, want 3", len(reqs))
	}
	var names []string
	for _, tool := range reqs[0].Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "get_order,issue_refund,list_refunds" {
		t.Errorf("tools sent to the model: %v", names)
	}
	obs, isError := toolResult(t, reqs[1], "toolu_1")
	if !isError {
		t.Error("the refund's tool_result is not marked is_error")
	}
	// The refund may have happened (the provider got it), toolgate checked
	// with list_refunds, and the model is told not to issue it again.
	for _, want := range []string{"unknown_outcome", "may", "list_refunds", "do not issue it as a new action"} {
		if !strings.Contains(strings.ToLower(obs), strings.ToLower(want)) {
			t.Errorf("the observation the model got does not say %q:\n%s", want, obs)
		}
	}
	if obs2, isError := toolResult(t, reqs[2], "toolu_2"); isError || !strings.Contains(obs2, "ORD-4471") {
		t.Errorf("list_refunds tool_result (is_error %t): %s", isError, obs2)
	}
	if c := p.Counts(); c.Requests != 1 {
		t.Errorf("the provider got %d refund requests, want 1: nothing sent the refund again", c.Requests)
	}
}
