package stats

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/toolgate/toolgate/types"
)

// DefaultWindow is the window of GET /v1/stats without ?window=.
const DefaultWindow = time.Hour

// ServeStats answers GET /v1/stats?window=1h with the Report. A window that
// does not parse, or is out of range, is a 400 in the result envelope with
// the code bad_request.
func (a *Aggregator) ServeStats(w http.ResponseWriter, r *http.Request) {
	window, ok := windowParam(w, r)
	if !ok {
		return
	}
	rep, err := a.Query(r.Context(), window)
	if err != nil {
		a.writeQueryError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// SeriesResponse is the answer of GET /v1/stats/series.
type SeriesResponse struct {
	Tool   string `json:"tool"`
	Window string `json:"window"`
	// Step is how long each point lasts ("1m").
	Step string `json:"step"`
	// TimeoutMS is the tool's read timeout, the line to draw p95 against.
	TimeoutMS int64   `json:"timeout_ms"`
	Points    []Point `json:"points"`
}

// ServeSeries answers GET /v1/stats/series?tool=NAME&window=1h with a
// SeriesResponse. The tool is required.
func (a *Aggregator) ServeSeries(w http.ResponseWriter, r *http.Request) {
	tool := r.URL.Query().Get("tool")
	if tool == "" {
		writeError(w, http.StatusBadRequest, types.CodeBadRequest, "the tool parameter is required: /v1/stats/series?tool=NAME&window=1h")
		return
	}
	window, ok := windowParam(w, r)
	if !ok {
		return
	}
	points, err := a.Series(r.Context(), tool, window)
	if err != nil {
		a.writeQueryError(w, err)
		return
	}
	var timeout time.Duration
	if visibleIn(r.Context())(tool) {
		timeout = a.readTimeout(tool) // a hidden tool's is not shown either
	}
	writeJSON(w, http.StatusOK, &SeriesResponse{Tool: tool, Window: FormatWindow(window),
		Step: FormatWindow(a.Step(window)), TimeoutMS: timeout.Milliseconds(), Points: points})
}

// AlertsResponse is the answer of GET /v1/alerts.
type AlertsResponse struct {
	Alerts []Alert `json:"alerts"`
}

// ServeAlerts answers GET /v1/alerts with an AlertsResponse (an empty list
// when all is well).
func (a *Aggregator) ServeAlerts(w http.ResponseWriter, r *http.Request) {
	alerts, err := a.Alerts(r.Context())
	if err != nil {
		a.writeQueryError(w, err)
		return
	}
	if alerts == nil {
		alerts = []Alert{}
	}
	writeJSON(w, http.StatusOK, &AlertsResponse{Alerts: alerts})
}

// windowParam reads ?window= (DefaultWindow when absent); on a bad one it
// writes the 400 and returns false.
func windowParam(w http.ResponseWriter, r *http.Request) (time.Duration, bool) {
	s := r.URL.Query().Get("window")
	if s == "" {
		return DefaultWindow, true
	}
	d, err := ParseWindow(s)
	if err != nil {
		writeError(w, http.StatusBadRequest, types.CodeBadRequest,
			"window="+s+" is not a window: use a duration such as 15m, 1h, 24h or 7d, at most "+FormatWindow(MaxWindow))
		return 0, false
	}
	return d, true
}

// writeQueryError answers a failed query: a bad window is the caller's
// mistake (400); anything else is the store's (503, logged here once).
func (a *Aggregator) writeQueryError(w http.ResponseWriter, err error) {
	if errors.Is(err, ErrBadWindow) {
		writeError(w, http.StatusBadRequest, types.CodeBadRequest, err.Error())
		return
	}
	a.cfg.Logger.Error("stats query failed", "err", err)
	writeError(w, http.StatusServiceUnavailable, types.CodeUnavailable, "the monitoring figures could not be read from the store; try again shortly")
}

// writeError writes the result envelope of a gateway refusal.
func writeError(w http.ResponseWriter, status int, code types.Code, msg string) {
	writeJSON(w, status, &types.Result{OK: false, Error: types.NewError(code, msg), Observation: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
