package server

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A request without a key is logged at DEBUG (a tab left open logs
// nothing); a wrong key at WARN once per client per quiet period, the next
// WARN counting those refused meanwhile.
func TestRefusalLog(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	r := func(addr, auth string) *http.Request {
		req := httptest.NewRequest("GET", "/v1/stats", nil)
		req.RemoteAddr = addr
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		return req
	}
	var l refusalLog
	for i, tc := range []struct {
		req     *http.Request
		at      time.Duration
		level   slog.Level
		quieted int
	}{
		{r("10.0.0.1:5000", ""), 0, slog.LevelDebug, 0},
		{r("10.0.0.1:5000", ""), time.Second, slog.LevelDebug, 0},
		{r("10.0.0.1:5000", "Bearer wrong"), 2 * time.Second, slog.LevelWarn, 0},
		{r("10.0.0.1:5001", "Bearer wrong"), 3 * time.Second, slog.LevelDebug, 0},
		{r("10.0.0.1:5002", "Bearer wrong"), 4 * time.Second, slog.LevelDebug, 0},
		{r("10.0.0.2:5000", "Bearer wrong"), 5 * time.Second, slog.LevelWarn, 0},
		{r("10.0.0.1:5003", "Bearer wrong"), 11 * time.Minute, slog.LevelWarn, 2},
		{r("10.0.0.1:5003", "Bearer wrong"), 12 * time.Minute, slog.LevelDebug, 0},
	} {
		level, quieted := l.level(tc.req, t0.Add(tc.at))
		if level != tc.level || quieted != tc.quieted {
			t.Errorf("refusal %d: %s with %d quieted, want %s with %d", i, level, quieted, tc.level, tc.quieted)
		}
	}
}

// Five polls of a tab without a key log no WARN line.
func TestNoWarnPerUnauthenticatedPoll(t *testing.T) {
	b := setup(t, setupOpts{})
	for range 5 {
		if got := b.get("/v1/runs", ""); got.status != http.StatusUnauthorized {
			t.Fatalf("GET /v1/runs without a key: %d", got.status)
		}
	}
	for range 3 {
		b.get("/v1/runs", "not-a-key-of-this-server")
	}
	if n := strings.Count(b.logs.text(), "WARN request refused"); n != 1 {
		t.Errorf("%d WARN lines for 5 requests without a key and 3 with a wrong one, want 1:\n%s", n, b.logs.text())
	}
}
