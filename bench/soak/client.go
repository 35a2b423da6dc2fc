package soak

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

// client is the soak's agent host: it talks to toolgate's HTTP API.
type client struct {
	base string
	http *http.Client
}

func newClient(base string, callers int) *client {
	return &client{base: base, http: &http.Client{Transport: newTransport(callers), Timeout: 2 * time.Minute}}
}

// answer is what one call got back.
type answer struct {
	op     *operation
	callID string
	// status is the HTTP status; 0 when no answer came (err says why).
	status int
	err    error
	// env is the envelope of an HTTP 200.
	env types.Result
}

// answered says the call got an HTTP 200 envelope of its own.
func (a *answer) answered() bool {
	return a.status == http.StatusOK && a.err == nil && a.env.Meta.CallID == a.callID
}

// call sends one call of op and decodes the answer.
func (c *client) call(ctx context.Context, op *operation, callID string) answer {
	a := answer{op: op, callID: callID}
	body := fmt.Sprintf(`{"tool":%q,"args":%s,"call_id":%q}`, op.tool, op.args, callID)
	status, b, err := c.do(ctx, http.MethodPost, "/v1/runs/"+op.run+"/calls", body)
	a.status, a.err = status, err
	if err != nil {
		return a
	}
	if status != http.StatusOK {
		a.err = fmt.Errorf("HTTP %d: %s", status, clip(b))
		return a
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&a.env); err != nil {
		a.err = fmt.Errorf("the answer is not an envelope: %v: %s", err, clip(b))
	}
	return a
}

// createRuns creates the soak's n runs, runID(0) to runID(n-1).
func (c *client) createRuns(ctx context.Context, n int) error {
	for i := range n {
		if err := c.createRun(ctx, runID(i)); err != nil {
			return err
		}
	}
	return nil
}

// createRun creates the run id, for the principal soak, with no refunds
// in its state yet.
func (c *client) createRun(ctx context.Context, id string) error {
	status, b, err := c.do(ctx, http.MethodPost, "/v1/runs",
		fmt.Sprintf(`{"run_id":%q,"principal":{"id":"soak"},"state":{"refunded_paise":0,"refunds":0}}`, id))
	if err == nil && status != http.StatusCreated {
		err = fmt.Errorf("HTTP %d: %s", status, clip(b))
	}
	if err != nil {
		return fmt.Errorf("soak: create run %s: %w", id, err)
	}
	return nil
}

// runState is a run's state as the server holds it, and whether replaying
// its log rebuilds it.
type runState struct {
	RefundedPaise int64
	Refunds       int64
	Matches       bool
}

// runs reads the state of every run and its replay.
func (c *client) runs(ctx context.Context, n int) (map[string]runState, error) {
	out := make(map[string]runState, n)
	for i := range n {
		id := runID(i)
		var doc struct {
			State struct {
				RefundedPaise int64 `json:"refunded_paise"`
				Refunds       int64 `json:"refunds"`
			} `json:"state"`
		}
		if err := c.getJSON(ctx, "/v1/runs/"+id, &doc); err != nil {
			return nil, err
		}
		var rep struct {
			Matches bool `json:"matches"`
		}
		if err := c.getJSON(ctx, "/v1/runs/"+id+"/replay", &rep); err != nil {
			return nil, err
		}
		out[id] = runState{RefundedPaise: doc.State.RefundedPaise, Refunds: doc.State.Refunds, Matches: rep.Matches}
	}
	return out, nil
}

func (c *client) getJSON(ctx context.Context, path string, v any) error {
	status, b, err := c.do(ctx, http.MethodGet, path, "")
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("HTTP %d: %s", status, clip(b))
	}
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		return fmt.Errorf("soak: GET %s: %w", path, err)
	}
	return nil
}

func (c *client) do(ctx context.Context, method, path, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}
