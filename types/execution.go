package types

import (
	"encoding/json"
	"time"
)

// Execution is the monitoring row of one call: written for every call,
// success or failure, validation refusals and dedupe replays included.
type Execution struct {
	ID           int64           `json:"id"`
	RunID        string          `json:"run_id"`
	Step         int64           `json:"step"`
	CallID       string          `json:"call_id"`
	Tool         string          `json:"tool"`
	Dependency   string          `json:"dependency,omitempty"`
	ArgsHash     string          `json:"args_hash"`
	Args         json.RawMessage `json:"args"`
	OperationKey string          `json:"operation_key,omitempty"`
	Code         Code            `json:"code"`
	OK           bool            `json:"ok"`
	SideEffect   SideEffect      `json:"side_effect"`
	Replayed     bool            `json:"replayed"`
	Verified     bool            `json:"verified"`
	Attempts     int             `json:"attempts"`
	Retries      int             `json:"retries"`
	LatencyMS    float64         `json:"latency_ms"`
	InputTokens  int64           `json:"input_tokens"`
	OutputTokens int64           `json:"output_tokens"`
	StartedAt    time.Time       `json:"started_at"`
	FinishedAt   time.Time       `json:"finished_at"`
	// Version is the run version this call's commit produced: replay applies
	// rows in this order.
	Version int64 `json:"version"`
	// StatePatch is the top-level state keys the call set (successes only).
	StatePatch json.RawMessage `json:"state_patch,omitempty"`
	// Result is the whole envelope returned to the caller.
	Result  json.RawMessage `json:"result"`
	TraceID string          `json:"trace_id,omitempty"`
}

// ExecutionFilter selects execution rows, newest first.
type ExecutionFilter struct {
	RunID string
	Tool  string
	// Owner, when set, keeps the rows of runs whose Owner it is (an API
	// key's own rows).
	Owner string
	// Code, when set, keeps the rows whose outcome code it is.
	Code Code
	// Since, when not zero, keeps rows that finished at or after it.
	Since time.Time
	// Until, when not zero, keeps rows that finished before it (Since is
	// inclusive, Until exclusive, so consecutive windows never share a row).
	Until time.Time
	// BeforeID, when above 0, keeps rows whose ID is below it: the cursor
	// of newest-first paging (the ID of the last row of the previous page).
	// IDs only grow, so rows added meanwhile never fall behind the cursor.
	BeforeID int64
	// AfterID, when above 0, keeps rows whose ID is above it: the cursor of
	// oldest-first paging.
	AfterID int64
	// Limit caps the rows returned; 0 means 100.
	Limit int
	// Ascending returns the oldest first (replay order) instead of newest.
	Ascending bool
}
