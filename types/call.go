package types

import "encoding/json"

// Call is one request by the model to run one tool.
type Call struct {
	RunID string `json:"run_id"`
	Tool  string `json:"tool"`
	// Args is a JSON object. It is kept raw so that integers beyond 2^53 and
	// exact decimals are never rounded through float64.
	Args json.RawMessage `json:"args"`
	// CallID is the model's id for the call (toolu_..., call_...). When empty
	// the gateway makes one.
	CallID string `json:"call_id,omitempty"`
	Usage  Usage  `json:"usage,omitzero"`
}

// Usage is the token cost the agent host reports for the model turn that
// produced a call.
type Usage struct {
	InputTokens  int64 `json:"input_tokens,omitempty"`
	OutputTokens int64 `json:"output_tokens,omitempty"`
}
