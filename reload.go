package toolgate

import (
	"errors"
	"reflect"
	"strings"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/config/openapi"
	"github.com/toolgate/toolgate/execute/mcpcall"
)

// ConfigInfo says which configuration a Gateway runs. It holds no secret:
// no key, header or expanded variable, only the version (a hash of the
// file), the file's path and counts.
type ConfigInfo struct {
	// Version is a hash of the config file (config.Config.Version); an
	// approval is bound to the version that judged its call.
	Version string `json:"version"`
	// Path is the file the config came from ("" when built in Go).
	Path string `json:"path,omitempty"`
	// LoadedAt is when this version became the live one.
	LoadedAt time.Time `json:"loaded_at"`
	// Tools and Dependencies count what the live config declares.
	Tools        int `json:"tools"`
	Dependencies int `json:"dependencies"`
	// RestartRequired lists the keys whose new values a reload did not
	// apply (see RestartOnlyKeys): they take effect at the next start.
	RestartRequired []string `json:"restart_required,omitempty"`
	// LastReload is the outcome of the latest reload, nil before the first.
	LastReload *ReloadOutcome `json:"last_reload,omitempty"`
}

// ReloadOutcome is what one reload did.
type ReloadOutcome struct {
	// At is when the reload was attempted.
	At time.Time `json:"at"`
	// OK says the new config is live; false means it was refused and the
	// previous one stays.
	OK bool `json:"ok"`
	// Version is the version that is live after the reload.
	Version string `json:"version"`
	// Previous is the version that was live before it.
	Previous string `json:"previous"`
	// Problems are why a refused config was refused, one line each (the
	// log has the full text).
	Problems []string `json:"problems,omitempty"`
	// NotApplied are the keys that changed in the file but need a restart.
	NotApplied []string `json:"not_applied,omitempty"`
}

// RestartOnlyKeys are the top-level config keys a reload does not apply:
// the listening socket, the store, the bearer keys the server and MCP
// endpoint were built with, the request body bound and the trace exporter
// are set up once when the process starts. A reload that changes one keeps
// the running value, applies the rest and reports the key as not applied.
var RestartOnlyKeys = []string{"listen", "store", "auth", "max_body_bytes", "telemetry"}

// restartOnly reads and writes each restart-only key of a config.
var restartOnly = []struct {
	key  string
	same func(a, b *config.Config) bool
	keep func(from, to *config.Config)
}{
	{"listen", func(a, b *config.Config) bool { return a.Listen == b.Listen }, func(f, t *config.Config) { t.Listen = f.Listen }},
	{"store", func(a, b *config.Config) bool { return a.Store == b.Store }, func(f, t *config.Config) { t.Store = f.Store }},
	{"auth", func(a, b *config.Config) bool { return reflect.DeepEqual(a.Auth, b.Auth) }, func(f, t *config.Config) { t.Auth = f.Auth }},
	{"max_body_bytes", func(a, b *config.Config) bool { return a.MaxBodyBytes == b.MaxBodyBytes }, func(f, t *config.Config) { t.MaxBodyBytes = f.MaxBodyBytes }},
	{"telemetry", func(a, b *config.Config) bool { return a.Telemetry == b.Telemetry }, func(f, t *config.Config) { t.Telemetry = f.Telemetry }},
}

// ConfigInfo returns which configuration is live and how the last reload
// went.
func (g *Gateway) ConfigInfo() ConfigInfo {
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	cfg := g.pipeline.Tools()
	info := ConfigInfo{Version: cfg.Version, Path: cfg.Path, LoadedAt: g.loadedAt,
		Tools: len(cfg.Tools), Dependencies: len(cfg.Dependencies),
		RestartRequired: append([]string(nil), g.restartRequired...)}
	if g.lastReload != nil {
		last := *g.lastReload
		info.LastReload = &last
	}
	return info
}

// ReloadFile loads path ("" means the file the live config came from) and
// reloads it (Reload). When the file does not load or compile, the error
// lists every problem (errors.Join of *config.Problem and compile errors),
// the outcome says the reload was refused, and the live config stays.
func (g *Gateway) ReloadFile(path string) (*ReloadOutcome, error) {
	if path == "" {
		path = g.pipeline.Tools().Path
	}
	if path == "" {
		return nil, errors.New("toolgate: reload: the live config was not loaded from a file")
	}
	cfg, err := config.Load(path)
	if err != nil {
		return g.refused(err), err
	}
	return g.Reload(cfg)
}

// Reload makes cfg the configuration of every call admitted from now on.
// Calls in flight finish under the configuration they were admitted with
// (their timeouts, retries, verify read and state update); an approval
// stays bound to the version that judged its call, so a call judged again
// under another version needs a fresh approval. cfg is normalized and
// compiled first: when that fails, the error lists every problem and
// nothing changes.
//
// The keys of RestartOnlyKeys keep their running values (they are copied
// into cfg) and, when they differ, are named in the outcome's NotApplied.
// Circuit breakers, retry budgets and statistics keep their state for every
// dependency and tool the new config still has.
func (g *Gateway) Reload(cfg *config.Config) (*ReloadOutcome, error) {
	if cfg == nil {
		return nil, errors.New("toolgate: Reload needs a config")
	}
	if err := cfg.Normalize(); err != nil {
		return g.refused(err), err
	}
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	old := g.pipeline.Tools()
	var notApplied []string
	for _, k := range restartOnly {
		if !k.same(old, cfg) {
			notApplied = append(notApplied, k.key)
			k.keep(old, cfg)
		}
	}
	now := g.pipeline.Now()
	var err error
	switch {
	case g.upstreams != nil:
		err = g.upstreams.reload(cfg, g.pipeline.Reload)
	case mcpcall.HasMCP(cfg):
		err = errors.New("the new config adds MCP servers; they are connected when toolgate starts: restart toolgate")
	case openapi.Has(cfg):
		err = reloadOpenAPI(cfg, g.pipeline.Reload)
	default:
		err = g.pipeline.Reload(cfg)
	}
	if err != nil {
		g.lastReload = &ReloadOutcome{At: now, Version: old.Version, Previous: old.Version, Problems: problemLines(err)}
		out := *g.lastReload
		return &out, err
	}
	g.loadedAt = now
	// Restart-only values are carried forward, so the live ones are those
	// of the start: what differs from them now is what waits for a restart.
	g.restartRequired = notApplied
	g.lastReload = &ReloadOutcome{At: now, OK: true, Version: cfg.Version, Previous: old.Version, NotApplied: notApplied}
	out := *g.lastReload
	return &out, nil
}

// refused records a reload refused before it reached the pipeline.
func (g *Gateway) refused(err error) *ReloadOutcome {
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	v := g.pipeline.Tools().Version
	g.lastReload = &ReloadOutcome{At: g.pipeline.Now(), Version: v, Previous: v, Problems: problemLines(err)}
	out := *g.lastReload
	return &out
}

// problemLines is the first line of each problem in err: a YAML syntax
// error's further lines quote the file, which may hold expanded secrets.
func problemLines(err error) []string {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	lines := make([]string, 0, len(errs))
	for _, e := range errs {
		s, _, _ := strings.Cut(e.Error(), "\n")
		lines = append(lines, strings.TrimSuffix(s, ":"))
	}
	return lines
}
