package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
)

// Problem is one thing wrong with a config: where (the file and a dotted key
// path such as tools.issue_refund.timeout.read) and why.
type Problem struct {
	File string
	Key  string
	Why  string
}

// Error formats "file: key: why".
func (p *Problem) Error() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		b.WriteString(": ")
	}
	if p.Key != "" {
		b.WriteString(p.Key)
		b.WriteString(": ")
	}
	b.WriteString(p.Why)
	return b.String()
}

// Load reads a toolgate.yaml, expands ${VAR} from the environment, fills in
// the defaults and checks the structure. The error, when not nil, lists every
// problem found (errors.Join of *Problem).
func Load(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(raw, path, os.LookupEnv)
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Parse is Load on bytes: path only names the file in problems and anchors a
// relative sqlite path; lookup resolves ${VAR}.
func Parse(raw []byte, path string, lookup func(string) (string, bool)) (*Config, error) {
	var missing []string
	expanded := envRef.ReplaceAllFunc(raw, func(m []byte) []byte {
		name := string(envRef.FindSubmatch(m)[1])
		v, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
			return nil
		}
		return []byte(v)
	})
	if len(missing) > 0 {
		var errs []error
		for _, name := range dedupe(missing) {
			errs = append(errs, &Problem{File: path, Why: fmt.Sprintf("environment variable %s is not set (referenced as ${%s})", name, name)})
		}
		return nil, errors.Join(errs...)
	}
	cfg := &Config{}
	if err := yaml.UnmarshalWithOptions(expanded, cfg, yaml.Strict()); err != nil {
		return nil, &Problem{File: path, Why: "not a valid toolgate config:\n" + yaml.FormatError(err, false, true)}
	}
	cfg.Path = path
	sum := sha256.Sum256(expanded)
	cfg.Version = hex.EncodeToString(sum[:8])
	if err := cfg.Normalize(); err != nil {
		return nil, err
	}
	return cfg, nil
}

func dedupe(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// Normalize fills in names and defaults and checks the structure of a config
// built in Go or loaded from YAML. It returns every problem at once. It is
// safe to call more than once.
func (c *Config) Normalize() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &Problem{File: c.Path, Key: key, Why: fmt.Sprintf(format, args...)})
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Store == "" {
		c.Store = DefaultStore
	}
	if why := checkPublicURL(c.PublicURL); why != "" {
		bad("public_url", "%s", why)
	}
	c.normalizeStore(bad)
	if c.ApprovalTTL == 0 {
		c.ApprovalTTL = Duration(DefaultApprovalTTL)
	}
	if c.MaxStateBytes == 0 {
		c.MaxStateBytes = DefaultMaxStateBytes
	} else if c.MaxStateBytes < 1024 {
		bad("max_state_bytes", "%d is too small (at least 1024)", c.MaxStateBytes)
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	} else if c.MaxBodyBytes < 1024 {
		bad("max_body_bytes", "%d is too small (at least 1024)", c.MaxBodyBytes)
	}
	for _, e := range c.Telemetry.normalize() {
		bad(e.Key, "%s", e.Why)
	}
	c.checkKeys(bad)
	if c.Dependencies == nil {
		c.Dependencies = map[string]*Dependency{}
	}
	for _, name := range sortedKeys(c.Dependencies) {
		c.normalizeDependency(name, bad)
	}
	if c.Tools == nil {
		c.Tools = map[string]*Tool{}
	}
	c.holdOverrides()
	for _, name := range sortedKeys(c.Tools) {
		t := c.Tools[name]
		key := "tools." + name
		if t == nil {
			bad(key, "empty tool")
			continue
		}
		t.Name = name
		for _, e := range t.normalize(c) {
			e.File, e.Key = c.Path, key+joinKey(e.Key)
			errs = append(errs, e)
		}
	}
	errs = append(errs, c.normalizeQuotas()...)
	// A config with no tools is valid: a packaged default config serves
	// nothing until the operator adds tools, and reloads them in.
	if c.Version == "" {
		b, _ := json.Marshal(c)
		sum := sha256.Sum256(b)
		c.Version = hex.EncodeToString(sum[:8])
	}
	return errors.Join(errs...)
}

// normalizeStore checks the store URL and makes a relative SQLite path
// relative to the config file's directory.
func (c *Config) normalizeStore(bad func(key, format string, args ...any)) {
	switch {
	case c.Store == "memory":
	case strings.HasPrefix(c.Store, "sqlite:"):
		p := strings.TrimPrefix(c.Store, "sqlite:")
		if p == "" {
			bad("store", "sqlite: needs a file path (sqlite:toolgate.db)")
		} else if !filepath.IsAbs(p) && c.Path != "" && p != ":memory:" {
			c.Store = "sqlite:" + filepath.Join(filepath.Dir(c.Path), p)
		}
	case strings.HasPrefix(c.Store, "postgres://"), strings.HasPrefix(c.Store, "postgresql://"):
	default:
		bad("store", "%q is not a store: use sqlite:PATH, postgres://user@host/db or memory", c.Store)
	}
}

// checkKeys checks the auth keys: each named, names unique, keys at least
// 16 characters.
func (c *Config) checkKeys(bad func(key, format string, args ...any)) {
	names := map[string]bool{}
	for i, k := range c.Auth.Keys {
		key := fmt.Sprintf("auth.keys[%d]", i)
		if k.Name == "" {
			bad(key+".name", "every key needs a name (it owns the runs it creates)")
		} else if names[k.Name] {
			bad(key+".name", "name %q is used twice", k.Name)
		}
		names[k.Name] = true
		if len(k.Key) < 16 {
			bad(key+".key", "a key must be at least 16 characters (got %d)", len(k.Key))
		}
	}
}

// normalizeDependency checks the dependency name and fills in its
// defaults.
func (c *Config) normalizeDependency(name string, bad func(key, format string, args ...any)) {
	d := c.Dependencies[name]
	key := "dependencies." + name
	if d == nil {
		bad(key, "empty dependency")
		return
	}
	d.Name = name
	if d.MCP != nil {
		for _, e := range d.MCP.normalize(c.dir()) {
			bad(key+joinKey(e.Key), "%s", e.Why)
		}
	} else if !strings.HasPrefix(d.BaseURL, "http://") && !strings.HasPrefix(d.BaseURL, "https://") {
		bad(key+".base_url", "%q must start with http:// or https://", d.BaseURL)
	}
	for _, e := range append(d.normalizeOpenAPI(c.dir()), d.checkImport()...) {
		bad(key+joinKey(e.Key), "%s", e.Why)
	}
	d.BaseURL = strings.TrimRight(d.BaseURL, "/")
	if d.Breaker.Threshold == 0 {
		d.Breaker.Threshold = DefaultBreakerThreshold
	} else if d.Breaker.Threshold < 0 {
		bad(key+".breaker.threshold", "must be at least 1")
	}
	if d.Breaker.Cooldown == 0 {
		d.Breaker.Cooldown = Duration(DefaultBreakerCooldown)
	}
	if d.RetryBudget.Ratio == 0 {
		d.RetryBudget.Ratio = DefaultRetryBudgetRatio
	} else if d.RetryBudget.Ratio < 0 || d.RetryBudget.Ratio > 1 {
		bad(key+".retry_budget.ratio", "%v must be between 0 and 1", d.RetryBudget.Ratio)
	}
	if d.RetryBudget.MinRetries == 0 {
		d.RetryBudget.MinRetries = DefaultRetryBudgetMin
	} else if d.RetryBudget.MinRetries < 0 {
		bad(key+".retry_budget.min_retries", "%d must be at least 1", d.RetryBudget.MinRetries)
	}
}

// normalize fills in the telemetry defaults and checks the exporter
// choice and the endpoint.
func (t *Telemetry) normalize() []*Problem {
	var ps []*Problem
	if t.Traces == "" {
		t.Traces = DefaultTraces
	}
	switch t.Traces {
	case "none", "stdout", "otlp":
	default:
		ps = append(ps, &Problem{Key: "telemetry.traces", Why: fmt.Sprintf("%q is not an exporter: use none, stdout or otlp", t.Traces)})
	}
	if t.OTLPEndpoint == "" {
		t.OTLPEndpoint = DefaultOTLPEndpoint
	}
	if u, err := url.Parse(t.OTLPEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		ps = append(ps, &Problem{Key: "telemetry.otlp_endpoint", Why: fmt.Sprintf("%q must be an http:// or https:// URL such as %s", t.OTLPEndpoint, DefaultOTLPEndpoint)})
	}
	if t.ServiceName == "" {
		t.ServiceName = DefaultServiceName
	}
	return ps
}

func joinKey(k string) string {
	if k == "" || strings.HasPrefix(k, "[") {
		return k
	}
	return "." + k
}

// jsonNumbers turns YAML-decoded values into what a JSON decoder would have
// produced (maps of string keys, json.Number numbers).
func jsonNumbers(v map[string]any) (map[string]any, error) {
	if jsonShaped(v) {
		return v, nil // already what a JSON decoder gives (an imported schema)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("not representable as JSON: %v", err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out map[string]any
	if err := d.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// jsonShaped reports whether v holds only what encoding/json with
// UseNumber produces: string-keyed maps, []any, json.Number, string, bool
// and nil. Schemas shared between tools are walked, never copied.
func jsonShaped(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			if !jsonShaped(x) {
				return false
			}
		}
		return true
	case []any:
		for _, x := range v {
			if !jsonShaped(x) {
				return false
			}
		}
		return true
	case nil, string, bool, json.Number:
		return true
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// dir is the config file's directory, "" when the config was built in Go.
func (c *Config) dir() string {
	if c.Path == "" {
		return ""
	}
	return filepath.Dir(c.Path)
}

// ToolNames returns the tool names, sorted.
func (c *Config) ToolNames() []string { return sortedKeys(c.Tools) }

// checkPublicURL says what is wrong with a public_url ("" when nothing is):
// it is an absolute http:// or https:// URL with a host and nothing after
// its path, which is kept without its trailing slash.
func checkPublicURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("%q is not an absolute http:// or https:// URL (write it as clients reach the server, e.g. https://tools.example.com)", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Sprintf("%q has a user, a query or a fragment; give the scheme, host and path only", raw)
	}
	return ""
}
