package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Toolgate is a tiny client of toolgate's HTTP API: the three requests an
// agent host needs.
type Toolgate struct {
	// BaseURL is the server, e.g. http://127.0.0.1:8470.
	BaseURL string
	// Key is sent as "Authorization: Bearer Key" when set.
	Key string
	// HTTP is the client to use; http.DefaultClient when nil. Give it no
	// timeout shorter than the slowest tool call.
	HTTP *http.Client
}

// Result is the part of toolgate's result envelope the loop reads.
type Result struct {
	OK          bool            `json:"ok"`
	Data        json.RawMessage `json:"data"`
	Observation string          `json:"observation"`
	Error       *struct {
		Code string `json:"code"`
	} `json:"error"`
	Meta struct {
		Step       int64  `json:"step"`
		SideEffect string `json:"side_effect"`
		Next       string `json:"next"`
		VerifyWith string `json:"verify_with"`
		Replayed   bool   `json:"replayed"`
	} `json:"meta"`
}

// Tools is GET /v1/tools?format=...: the tool list in a model API's shape,
// undecoded.
func (c *Toolgate) Tools(ctx context.Context, format string) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.do(ctx, http.MethodGet, "/v1/tools?format="+url.QueryEscape(format), nil, &raw)
	return raw, err
}

// StartRun is POST /v1/runs: a run for a principal, with an initial state.
func (c *Toolgate) StartRun(ctx context.Context, principal, state any) (string, error) {
	var run struct {
		RunID string `json:"run_id"`
	}
	err := c.do(ctx, http.MethodPost, "/v1/runs", map[string]any{"principal": principal, "state": state}, &run)
	return run.RunID, err
}

// Call is POST /v1/runs/{run}/calls: one tool call. A tool's failure is a
// result with OK false, not an error.
func (c *Toolgate) Call(ctx context.Context, runID, tool string, args json.RawMessage, callID string, inputTokens, outputTokens int64) (*Result, error) {
	body := map[string]any{"tool": tool, "args": args, "call_id": callID}
	if inputTokens > 0 || outputTokens > 0 {
		body["usage"] = map[string]int64{"input_tokens": inputTokens, "output_tokens": outputTokens}
	}
	var res Result
	if err := c.do(ctx, http.MethodPost, "/v1/runs/"+url.PathEscape(runID)+"/calls", body, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func (c *Toolgate) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	client := c.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("toolgate %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("toolgate %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		// The gateway's own refusals carry the envelope: its observation
		// says what went wrong.
		var env Result
		if json.Unmarshal(b, &env) == nil && env.Observation != "" {
			return fmt.Errorf("toolgate %s %s: %s: %s", method, path, resp.Status, env.Observation)
		}
		return fmt.Errorf("toolgate %s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	return json.Unmarshal(b, out)
}
