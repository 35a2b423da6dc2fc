package reload

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/config"
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

// Config is what a Controller needs of its gateway.
type Config struct {
	// Live returns the configuration new calls are admitted under.
	// Required.
	Live func() *config.Config
	// Now is the gateway's clock. Required.
	Now func() time.Time
	// Apply makes a normalized config (imports not merged) live or says
	// why it cannot be. Required.
	Apply func(*config.Config) error
}

// Controller reloads one gateway's configuration, one reload at a time.
type Controller struct {
	cfg Config

	mu              sync.Mutex // one reload at a time; guards the fields below
	loadedAt        time.Time
	restartRequired []string
	lastReload      *ReloadOutcome
}

// New returns the controller of a gateway whose live config was loaded
// now.
func New(cfg Config) *Controller {
	return &Controller{cfg: cfg, loadedAt: cfg.Now()}
}

// Info returns which configuration is live and how the last reload went.
func (c *Controller) Info() ConfigInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	cfg := c.cfg.Live()
	info := ConfigInfo{Version: cfg.Version, Path: cfg.Path, LoadedAt: c.loadedAt,
		Tools: len(cfg.Tools), Dependencies: len(cfg.Dependencies),
		RestartRequired: append([]string(nil), c.restartRequired...)}
	if c.lastReload != nil {
		last := *c.lastReload
		info.LastReload = &last
	}
	return info
}

// ReloadFile loads path ("" means the file the live config came from) and
// reloads it (Reload). When the file does not load or compile, the error
// lists every problem (errors.Join of *config.Problem and compile errors),
// the outcome says the reload was refused, and the live config stays.
func (c *Controller) ReloadFile(path string) (*ReloadOutcome, error) {
	if path == "" {
		path = c.cfg.Live().Path
	}
	if path == "" {
		return nil, errors.New("toolgate: reload: the live config was not loaded from a file")
	}
	cfg, err := config.Load(path)
	if err != nil {
		return c.refused(err), err
	}
	return c.Reload(cfg)
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
func (c *Controller) Reload(cfg *config.Config) (*ReloadOutcome, error) {
	if cfg == nil {
		return nil, errors.New("toolgate: Reload needs a config")
	}
	if err := cfg.Normalize(); err != nil {
		return c.refused(err), err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.cfg.Live()
	var notApplied []string
	for _, k := range restartOnly {
		if !k.same(old, cfg) {
			notApplied = append(notApplied, k.key)
			k.keep(old, cfg)
		}
	}
	now := c.cfg.Now()
	if err := c.cfg.Apply(cfg); err != nil {
		c.lastReload = &ReloadOutcome{At: now, Version: old.Version, Previous: old.Version, Problems: problemLines(err)}
		out := *c.lastReload
		return &out, err
	}
	c.loadedAt = now
	// Restart-only values are carried forward, so the live ones are those
	// of the start: what differs from them now is what waits for a restart.
	c.restartRequired = notApplied
	c.lastReload = &ReloadOutcome{At: now, OK: true, Version: cfg.Version, Previous: old.Version, NotApplied: notApplied}
	out := *c.lastReload
	return &out, nil
}

// refused records a reload refused before it was applied.
func (c *Controller) refused(err error) *ReloadOutcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.cfg.Live().Version
	c.lastReload = &ReloadOutcome{At: c.cfg.Now(), Version: v, Previous: v, Problems: problemLines(err)}
	out := *c.lastReload
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
