// Package config loads and checks toolgate.yaml: the dependencies, the tools
// and their policies (docs/config.md).
//
// Load reads a file, expands ${VAR} from the environment, fills in the
// documented defaults and checks everything at once; Check returns every
// problem it finds, each naming the file, the tool and the key.
package config

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolgate/toolgate/types"
)

// Defaults used when a key is absent (docs/config.md lists them all).
const (
	DefaultListen              = "127.0.0.1:8470"
	DefaultStore               = "sqlite:toolgate.db"
	DefaultConnectTimeout      = 2 * time.Second
	DefaultReadTimeout         = 10 * time.Second
	DefaultMaxAttempts         = 4
	DefaultRetryBase           = time.Second
	DefaultRetryCap            = 30 * time.Second
	DefaultBreakerThreshold    = 5
	DefaultBreakerCooldown     = 60 * time.Second
	DefaultRetryBudgetRatio    = 0.2
	DefaultRetryBudgetMin      = 3
	DefaultMaxObservationBytes = 4096
	DefaultApprovalTTL         = 24 * time.Hour
	DefaultMaxBodyBytes        = 1 << 20
	DefaultMaxStateBytes       = 1 << 20
)

// Config is a loaded toolgate.yaml. The zero value of every field means its
// documented default; Load and Normalize fill the defaults in.
type Config struct {
	// Listen is the server's address. Default 127.0.0.1:8470.
	Listen string `yaml:"listen" json:"listen"`
	// MetricsListen, when set, is a second address that serves GET
	// /metrics alone, without a key, for a Prometheus on a private
	// network; /metrics then leaves the main address, where it otherwise
	// needs an approver key (no key in development mode). Default none.
	MetricsListen string `yaml:"metrics_listen" json:"metrics_listen,omitempty"`
	// PublicURL is the server's address as its clients reach it
	// (https://tools.example.com, behind a proxy): the MCP endpoint's
	// protected-resource metadata and its 401 answers name URLs under it.
	// Default: the address the request was sent to (its Host header).
	PublicURL string `yaml:"public_url" json:"public_url,omitempty"`
	// Store is "sqlite:PATH" (relative to the config file's directory),
	// "postgres://...", or "memory". Default sqlite:toolgate.db.
	Store string `yaml:"store" json:"store"`
	// Auth lists the bearer keys of agent hosts. None means loopback-only
	// development mode.
	Auth Auth `yaml:"auth" json:"auth"`
	// Dependencies are the services tools talk to, by name.
	Dependencies map[string]*Dependency `yaml:"dependencies" json:"dependencies"`
	// Tools are the actions the model may ask for, by name.
	Tools map[string]*Tool `yaml:"tools" json:"tools"`
	// ApprovalTTL is how long an approval stays valid. Default 24h.
	ApprovalTTL Duration `yaml:"approval_ttl" json:"approval_ttl"`
	// MaxBodyBytes bounds a request body on the server. Default 1 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes" json:"max_body_bytes"`
	// MaxStateBytes bounds a run's state document: a state update that
	// would make it larger is not applied (the call's own outcome stands,
	// and its observation says so). Default 1 MiB.
	MaxStateBytes int64 `yaml:"max_state_bytes" json:"max_state_bytes"`
	// Telemetry chooses where OpenTelemetry traces go. Default: nowhere.
	Telemetry Telemetry `yaml:"telemetry" json:"telemetry"`

	// Path is the file the config was loaded from ("" when built in Go).
	Path string `yaml:"-" json:"-"`
	// Version is a hash of the loaded config: approvals bind to it.
	Version string `yaml:"-" json:"-"`

	// imports is what import.go keeps between Normalize and Imported.
	imports importState
	// index is where each key was written (nil when built in Go).
	index *docIndex
	// secrets are the values of the ${VAR}s the file uses, by name: Redact
	// puts the names back in any text that would carry a value.
	secrets map[string]string
}

// Telemetry says where the spans of calls and attempts are exported.
type Telemetry struct {
	// Traces is none (no exporter), stdout (one JSON document per span,
	// for development) or otlp (OTLP over HTTP). Default none.
	Traces string `yaml:"traces" json:"traces"`
	// OTLPEndpoint is the OTLP/HTTP collector's base URL; spans are posted
	// to its /v1/traces. Default http://127.0.0.1:4318.
	OTLPEndpoint string `yaml:"otlp_endpoint" json:"otlp_endpoint"`
	// ServiceName is the service.name resource of the spans. Default
	// toolgate.
	ServiceName string `yaml:"service_name" json:"service_name"`
}

// Defaults of Telemetry.
const (
	DefaultTraces       = "none"
	DefaultOTLPEndpoint = "http://127.0.0.1:4318"
	DefaultServiceName  = "toolgate"
)

// Auth holds the API keys.
type Auth struct {
	// Keys are the bearer keys agent hosts and people send in
	// "Authorization: Bearer KEY". None means development mode: no auth,
	// and the server only listens on a loopback address.
	Keys []Key `yaml:"keys" json:"keys"`
}

// Key is one agent host's bearer key.
type Key struct {
	// Name names the key in logs and approvals; the runs a key creates
	// belong to it and are invisible to other keys. Required, unique.
	Name string `yaml:"name" json:"name"`
	// Key is the secret itself, at least 16 characters; write it as
	// ${VAR} so that it stays out of the file. Required.
	Key string `yaml:"key" json:"-"`
	// Principal, when set, is the principal of runs opened implicitly with
	// this key (MCP sessions).
	Principal *types.Principal `yaml:"principal" json:"principal,omitempty"`
	// Approver marks a person's key (an operator, the dashboard): it may
	// decide approvals and sees every approval request. An agent host's key
	// must never be an approver, or the agent could approve its own calls.
	Approver bool `yaml:"approver" json:"approver,omitempty"`
	// Tools are the tools this key sees and may call: names or globs
	// ("orders_*"); any other tool answers unknown_tool for this key, as if
	// it did not exist. Default (absent): every tool.
	Tools []string `yaml:"tools" json:"tools,omitempty"`
	// Resources are the imported MCP resources and resource templates this
	// key sees and may read: URIs, URI templates, names (with the import's
	// prefix) or globs. Default (absent): every imported one.
	Resources []string `yaml:"resources" json:"resources,omitempty"`
	// Prompts are the imported MCP prompts this key sees and may get:
	// names (with the import's prefix) or globs. Default: every one.
	Prompts []string `yaml:"prompts" json:"prompts,omitempty"`
}

// Dependency is one service that tools talk to; it has one circuit breaker.
type Dependency struct {
	Name string `yaml:"-" json:"name"`
	// BaseURL is the http:// or https:// URL that tools' request paths are
	// appended to. Required.
	BaseURL string `yaml:"base_url" json:"base_url"`
	// Headers are sent with every request to the dependency (credentials:
	// write them as ${VAR}). Default none.
	Headers map[string]string `yaml:"headers" json:"-"`
	// Breaker configures the dependency's circuit breaker.
	Breaker Breaker `yaml:"breaker" json:"breaker"`
	// RetryBudget bounds retries against this dependency.
	RetryBudget RetryBudget `yaml:"retry_budget" json:"retry_budget"`
	// MCP, when set, makes this dependency an MCP server, reached over
	// streamable HTTP (url) or run as a stdio subprocess (command); its tools
	// are called with tools/call, and base_url is not needed.
	MCP *MCP `yaml:"mcp" json:"mcp,omitempty"`
	// OpenAPI, when set, is an OpenAPI 3.0 or 3.1 document (JSON or YAML)
	// describing this dependency's HTTP API: a file path, relative to the
	// config file's directory, or an http(s) URL. Its operations become
	// tools (see import.go and package toolsource/openapi); the calls go to
	// base_url. Default: none.
	OpenAPI string `yaml:"openapi" json:"openapi,omitempty"`
	// OpenAPIRefOrigins are the other origins (scheme://host[:port], such
	// as https://schemas.example.com) whose documents the openapi:
	// document's $refs may name. Default none: a $ref names a part of the
	// document itself, or another document relative to it (a file next to
	// a file, the same origin for a URL).
	OpenAPIRefOrigins []string `yaml:"openapi_ref_origins" json:"openapi_ref_origins,omitempty"`
	// Import brings in the tools the source lists (an MCP server's tools,
	// an OpenAPI document's operations) under their own names plus prefix;
	// a tools: entry of the same name overrides any of their keys. Default:
	// nothing is imported.
	Import *Import `yaml:"import" json:"import,omitempty"`
}

// Breaker configures a dependency's circuit breaker.
type Breaker struct {
	// Threshold is how many consecutive transient failures open it. Default 5.
	Threshold int `yaml:"threshold" json:"threshold"`
	// Cooldown is how long it stays open before one probe. Default 60s.
	Cooldown Duration `yaml:"cooldown" json:"cooldown"`
}

// RetryBudget caps the retries in flight at one time against a dependency to
// a share of the calls active against it: a retry is allowed while the
// retries in flight are fewer than max(min_retries, ratio * active calls).
// A caller alone on a dependency always gets its configured attempts; the
// budget only holds back many callers retrying at once.
type RetryBudget struct {
	// Ratio is the share of the calls active against the dependency that
	// may be retrying at the same time (Envoy's budget_percent / 100).
	// Between 0 and 1. Default 0.2.
	Ratio float64 `yaml:"ratio" json:"ratio"`
	// MinRetries is how many retries may be in flight at a time whatever
	// the ratio allows (Envoy's min_retry_concurrency). At least 1.
	// Default 3.
	MinRetries int `yaml:"min_retries" json:"min_retries"`
}

// Tool is one action the model may ask for.
type Tool struct {
	Name string `yaml:"-" json:"name"`
	// Description tells the model what the tool does (it is sent in the
	// tool lists). Required.
	Description string `yaml:"description" json:"description"`
	// Dependency names the service the tool talks to; required for HTTP
	// tools. Go-function tools may leave it empty (their breaker is then
	// named after the tool).
	Dependency string `yaml:"dependency" json:"dependency,omitempty"`
	// Request is how an HTTP tool's call becomes a request.
	Request *Request `yaml:"request" json:"request,omitempty"`
	// Effect is read, idempotent or write. Default write.
	Effect types.Effect `yaml:"effect" json:"effect"`
	// Permission the principal must hold ("" = none needed).
	Permission string `yaml:"permission" json:"permission,omitempty"`
	// InputSchema is a JSON Schema (2020-12) for the arguments.
	InputSchema map[string]any `yaml:"input_schema" json:"input_schema,omitempty"`
	// OutputSchema, when set, is advertised to MCP clients and enforced: an
	// answer that does not match it is the failure invalid_output.
	OutputSchema map[string]any `yaml:"output_schema" json:"output_schema,omitempty"`
	// Timeout bounds each phase of an attempt and the whole call.
	Timeout Timeout `yaml:"timeout" json:"timeout"`
	// Retry is the tool's retry policy (retries are only made when they
	// are safe).
	Retry Retry `yaml:"retry" json:"retry"`
	// Idempotency says how a write's operation key is made and sent.
	Idempotency Idempotency `yaml:"idempotency" json:"idempotency"`
	// Rules are CEL rules evaluated in order after the permission check.
	Rules []Rule `yaml:"rules" json:"rules,omitempty"`
	// Owner checks that the object belongs to the principal.
	Owner *Lookup `yaml:"owner" json:"owner,omitempty"`
	// Verify is the read that settles an unknown outcome.
	Verify *Lookup `yaml:"verify" json:"verify,omitempty"`
	// State maps state keys to CEL expressions applied on success.
	State map[string]string `yaml:"state" json:"state,omitempty"`
	// Quotas are limits over a sliding window, shared across runs,
	// principals and replicas: a call that would exceed one is refused
	// quota_exceeded before anything is sent. Default none.
	Quotas []Quota `yaml:"quotas" json:"quotas,omitempty"`
	// MaxObservationBytes bounds the observation text. Default 4096.
	MaxObservationBytes int `yaml:"max_observation_bytes" json:"max_observation_bytes"`

	// Source, when set, says where an imported tool comes from; filled in
	// by Imported, never from YAML.
	Source *Source `yaml:"-" json:"source,omitempty"`

	// Func, when set, makes this a Go-function tool: it is called instead of
	// an HTTP request. Set through the library API, never from YAML.
	Func Func `yaml:"-" json:"-"`
}

// Func is a Go-function tool. args is the JSON object of arguments (numbers
// exact); the returned value is encoded as the result's data. A returned
// error is the tool's failure: a *FuncError says how to classify it, any
// other error is an upstream_error that is not retried for writes.
type Func func(ctx context.Context, args json.RawMessage) (any, error)

// FuncError lets a Go-function tool say what kind of failure it had.
type FuncError struct {
	// Code is the outcome code (rejected, upstream_error, rate_limited, ...).
	Code types.Code
	// Message is shown to the model.
	Message string
	// Transient marks the failure as worth retrying when repeating is safe.
	Transient bool
	// RetryAfter, when set, is honoured before the next attempt.
	RetryAfter time.Duration
}

// Error implements error.
func (e *FuncError) Error() string { return string(e.Code) + ": " + e.Message }

// Request maps a call to an HTTP request.
type Request struct {
	// Method is GET, POST, PUT, PATCH or DELETE. Default POST.
	Method string `yaml:"method" json:"method"`
	// Path is a template: "/orders/{order_id}". Arguments used in the path
	// are not sent again; GET and DELETE send the rest as the query string,
	// other methods as a JSON body. Required (it must start with /).
	Path string `yaml:"path" json:"path"`
	// Params, when set (tools imported from an OpenAPI document), places
	// every argument where the document says: the path, the query, a
	// header or the JSON body (see Param). Arguments are then never placed
	// by name or by method. Never read from YAML.
	Params map[string]Param `yaml:"-" json:"params,omitempty"`
}

// Timeout bounds each phase of one attempt.
type Timeout struct {
	// Connect bounds dialling (and TLS). Default 2s.
	Connect Duration `yaml:"connect" json:"connect"`
	// Read bounds the time from the request being sent to the whole response
	// being read. Default 10s.
	Read Duration `yaml:"read" json:"read"`
	// Total bounds the whole call: every attempt and every backoff. Default:
	// max_attempts x (connect + read) plus twice the un-jittered backoffs.
	Total Duration `yaml:"total" json:"total"`
}

// Retry is a tool's retry policy.
type Retry struct {
	// MaxAttempts counts the first attempt too. Default 4.
	MaxAttempts int `yaml:"max_attempts" json:"max_attempts"`
	// Base is the first backoff. Default 1s.
	Base Duration `yaml:"base" json:"base"`
	// Cap bounds any one backoff. Default 30s.
	Cap Duration `yaml:"cap" json:"cap"`
}

// Idempotency says how a write's operation key is made and sent.
type Idempotency struct {
	// Key is a template for the operation key. Default: a hash of
	// (run id, tool, canonical args).
	Key string `yaml:"key" json:"key,omitempty"`
	// Header, when set, carries the key to a dependency that honours it;
	// retrying a write after an unknown outcome is then safe.
	Header string `yaml:"header" json:"header,omitempty"`
}

// Rule is one CEL business rule.
type Rule struct {
	// Deny is a CEL expression; true refuses the call. Required.
	Deny string `yaml:"deny" json:"deny"`
	// Code is the outcome code of the refusal. Default "rule_denied"
	// ("approval_required" for an approval rule).
	Code string `yaml:"code" json:"code"`
	// Message is a template shown to the model: say what to do instead.
	// Required.
	Message string `yaml:"message" json:"message"`
	// Approval holds the call for a person's decision instead of refusing.
	Approval bool `yaml:"approval" json:"approval,omitempty"`
	// Next is the refusal's meta.next, the machine-readable form of what
	// the message tells the model to do: escalate, use_other_tool,
	// fix_args, stop or continue. Default escalate. Not for approval rules
	// (they answer wait).
	Next string `yaml:"next" json:"next,omitempty"`
}

// Lookup calls another (read) tool with arguments built from CEL
// expressions, then judges its result with a CEL expression.
type Lookup struct {
	// Lookup names the read tool (its effect must be read). Required.
	Lookup string `yaml:"lookup" json:"lookup"`
	// Args maps the lookup's argument names to CEL expressions over args,
	// principal and state.
	Args map[string]string `yaml:"args" json:"args"`
	// Expect (owner) must be true for the principal to own the object.
	// Required.
	Expect string `yaml:"expect" json:"expect,omitempty"`
	// Found (verify) is true when the write is seen to have happened.
	// Required.
	Found string `yaml:"found" json:"found,omitempty"`
	// Result (verify, optional) picks the data a verified call returns from
	// the read's answer, e.g.
	// "result.refunds.filter(r, r.amount_paise == args.amount_paise)[0]".
	// Without it the verified call returns the whole answer and `state:`
	// updates that expect the tool's own answer are skipped.
	Result string `yaml:"result" json:"result,omitempty"`
}
