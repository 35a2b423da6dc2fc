package faultcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/toolgate/toolgate/types"
)

// Call is one call a run sent and what came back.
type Call struct {
	// ID is the call_id; Run, Tool, Order and Amount what it asked.
	ID, Run, Tool, Order string
	Amount               int64
	// Sent is when it was sent; Took how long until its answer was read
	// (or the client gave up).
	Sent time.Time
	Took time.Duration
	// Status is the HTTP status, 0 when no answer came.
	Status int
	// Result is the envelope of an answered call.
	Result types.Result
	// Err says why a call has no envelope of its own.
	Err string
}

// Answered says the call got an envelope of its own: HTTP 200, or 503
// store_unavailable.
func (c *Call) Answered() bool { return c.Err == "" }

// Code is the answer's code ("ok" when it succeeded).
func (c *Call) Code() types.Code { return c.Result.Code() }

// client sends calls to one toolgate server.
type client struct {
	base string
	http *http.Client
}

func newClient(base string) *client {
	// The client waits well past any budget: an answer that comes late is
	// measured, not cut.
	return &client{base: base, http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// call sends one call and fills in what came back.
func (cl *client) call(ctx context.Context, c *Call) {
	args := map[string]any{"order_id": c.Order}
	if c.Tool != ToolRead {
		args["amount_paise"] = c.Amount
	}
	body, _ := json.Marshal(map[string]any{"tool": c.Tool, "args": args, "call_id": c.ID})
	c.Sent = time.Now()
	defer func() { c.Took = time.Since(c.Sent) }()
	req, err := http.NewRequestWithContext(ctx, "POST", cl.base+"/v1/runs/"+c.Run+"/calls", bytes.NewReader(body))
	if err != nil {
		c.Err = err.Error()
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := cl.http.Do(req)
	if err != nil {
		c.Err = "no answer: " + err.Error()
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.Err = "answer cut: " + err.Error()
		return
	}
	c.Status = resp.StatusCode
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&c.Result); err != nil {
		c.Err = fmt.Sprintf("HTTP %d, not an envelope: %v: %.200s", resp.StatusCode, err, b)
		return
	}
	switch {
	case resp.StatusCode == http.StatusOK && c.Result.Meta.CallID == c.ID:
	case resp.StatusCode == http.StatusServiceUnavailable && c.Result.Code() == types.CodeStoreUnavailable:
	default:
		c.Err = fmt.Sprintf("HTTP %d %s: %.300s", resp.StatusCode, c.Result.Code(), strings.TrimSpace(string(b)))
	}
}

// createRun creates a run whose state sums the refunds of its calls.
func (cl *client) createRun(ctx context.Context, id string) error {
	body := `{"run_id":"` + id + `","principal":{"id":"cust_42"},"state":{"refunded_paise":0,"keyed_paise":0,"mcp_paise":0}}`
	req, err := http.NewRequestWithContext(ctx, "POST", cl.base+"/v1/runs", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := cl.http.Do(req)
	if err != nil {
		return fmt.Errorf("faultcheck: create run %s: %w", id, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("faultcheck: create run %s: HTTP %d %s", id, resp.StatusCode, b)
	}
	return nil
}

// replayMatches asks the server whether replaying the run's log rebuilds
// its state.
func (cl *client) replayMatches(ctx context.Context, run string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", cl.base+"/v1/runs/"+run+"/replay", nil)
	if err != nil {
		return false, err
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		return false, fmt.Errorf("faultcheck: replay of %s: %w", run, err)
	}
	defer resp.Body.Close()
	var rep struct {
		Matches bool `json:"matches"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil || resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("faultcheck: replay of %s: HTTP %d %v", run, resp.StatusCode, err)
	}
	return rep.Matches, nil
}
