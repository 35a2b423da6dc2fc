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
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
)

// Problem is one thing wrong with a config: where (the file, the line and
// column, and a dotted key path such as tools.issue_refund.timeout.read)
// and why.
type Problem struct {
	File string
	// Pos is where the key was written; zero when unknown (a config built
	// in Go).
	Pos Position
	Key string
	Why string
	// Warning marks a problem that does not stop the config from loading
	// (toolgate check prints it and still succeeds).
	Warning bool
}

// Error formats "file:line:column: key: why" ("file: key: why" when the
// position is unknown).
func (p *Problem) Error() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Pos.Line == 0 {
			b.WriteString(": ")
		}
	}
	if p.Pos.Line > 0 {
		if p.File != "" {
			b.WriteString(":")
		}
		fmt.Fprintf(&b, "%d:%d: ", p.Pos.Line, p.Pos.Column)
	}
	if p.Key != "" {
		b.WriteString(p.Key)
		b.WriteString(": ")
	}
	if p.Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(p.Why)
	return b.String()
}

// Load reads a toolgate.yaml, expands ${VAR} from the environment, fills in
// the defaults and checks the structure. The error, when not nil, lists every
// problem found (errors.Join of *Problem, in the order of the file). The
// config is returned with problems too when the file could be decoded, so
// that later stages (toolgate check's compile) can report theirs in the
// same run; it must not be served.
//
// A path that is a symbolic link must lead to a .yaml, .yml or .json file:
// a link to another file (/etc/shadow) is refused by name, and nothing of
// that file is read or printed.
func Load(path string) (*Config, error) {
	if err := checkLink(path); err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(raw, path, os.LookupEnv)
}

// checkLink refuses a symbolic link to a file that is not a config file.
func checkLink(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return nil // ReadFile says why it cannot be read
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("config: %s is a symbolic link that cannot be followed", path)
	}
	switch strings.ToLower(filepath.Ext(target)) {
	case ".yaml", ".yml", ".json":
		return nil
	}
	return &Problem{File: path, Why: fmt.Sprintf("is a symbolic link to %s, which is not a .yaml, .yml or .json file; refusing to read it as a config", target)}
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Parse is Load on bytes: path only names the file in problems and anchors a
// relative sqlite path; lookup resolves ${VAR}.
//
// ${VAR} is expanded in the decoded string values, after the YAML is
// parsed: no problem, excerpt or log line ever carries a variable's value
// (problems quote ${VAR} as written).
func Parse(raw []byte, path string, lookup func(string) (string, bool)) (*Config, error) {
	body, err := parseDocument(raw)
	if err != nil {
		err.File = path
		return nil, err
	}
	w := &walker{index: &docIndex{pos: map[string]Position{}}}
	w.walk(body, "", reflect.TypeFor[Config]())
	cfg := &Config{index: w.index, Path: path}
	if err := yaml.NodeToValue(body, cfg, yaml.AllowDuplicateMapKey()); err != nil {
		return nil, cfg.problems(append(w.problems, decodeProblem(err)), nil)
	}
	cfg.index, cfg.Path = w.index, path // decoding does not touch them; be sure
	cfg.secrets = map[string]string{}
	var missing []*Problem
	for _, ph := range w.placeholders {
		if v, ok := lookup(ph.name); ok {
			cfg.secrets[ph.name] = v
		} else {
			missing = append(missing, &Problem{Pos: ph.pos, Why: fmt.Sprintf("environment variable %s is not set (referenced as ${%s})", ph.name, ph.name)})
		}
	}
	expandStrings(reflect.ValueOf(cfg).Elem(), func(s string) string {
		return envRef.ReplaceAllStringFunc(s, func(m string) string { return cfg.secrets[m[2:len(m)-1]] })
	})
	cfg.Version = versionOf(raw, cfg.secrets)
	var normalized error
	if len(missing) == 0 {
		normalized = cfg.Normalize()
	}
	if err := cfg.problems(append(w.problems, missing...), normalized); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// versionOf hashes the file and the values of the variables it uses.
func versionOf(raw []byte, secrets map[string]string) string {
	h := sha256.New()
	h.Write(raw)
	for _, k := range sortedKeys(secrets) {
		fmt.Fprintf(h, "\x00%s=%s", k, secrets[k])
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
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
	c.normalizeLimits(bad)
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
	errs = append(errs, c.normalizeTools()...)
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

// normalizeLimits fills in the approval TTL and the state and body size
// limits, which must be at least 1024 bytes.
func (c *Config) normalizeLimits(bad func(key, format string, args ...any)) {
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
}

// normalizeTools names each tool after its key and normalizes it, in key
// order, returning its problems under tools.NAME.
func (c *Config) normalizeTools() []error {
	var errs []error
	for _, name := range sortedKeys(c.Tools) {
		t := c.Tools[name]
		key := "tools." + name
		if t == nil {
			errs = append(errs, &Problem{File: c.Path, Key: key, Why: "empty tool"})
			continue
		}
		t.Name = name
		for _, e := range t.normalize(c) {
			e.File, e.Key = c.Path, key+joinKey(e.Key)
			errs = append(errs, e)
		}
	}
	return errs
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
		} else if strings.Contains(k.Name, "/") {
			// The key's name scopes its runs and operation keys as
			// "name/...": a / in it could make two keys' scopes overlap.
			bad(key+".name", "%q contains /, which separates a key's name from its run ids and operation keys; use letters, digits, - or _", k.Name)
		}
		names[k.Name] = true
		if len(k.Key) < 16 {
			bad(key+".key", "a key must be at least 16 characters (got %d)", len(k.Key))
		}
		for _, e := range k.checkCatalogue() {
			bad(key+joinKey(e.Key), "%s", e.Why)
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
