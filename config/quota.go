package config

import (
	"fmt"
	"regexp"
	"strings"
)

// DefaultQuotaKey is a quota's key when the config gives none: one counter
// per principal.
const DefaultQuotaKey = "{principal.id}"

// Quota is a limit shared across runs, principals and replicas, over a
// sliding window: the calls of every tool that names the same quota, with
// the same rendered key, may together use at most Limit within Window.
type Quota struct {
	// Name identifies the quota; tools that give the same name share it
	// (and must give it the same limit and window). Required.
	Name string `yaml:"name" json:"name"`
	// Key is a template naming whose quota a call uses ("{principal.id}",
	// "{args.order_id}", "tenant-{principal.attrs.tenant}"). Default
	// "{principal.id}".
	Key string `yaml:"key" json:"key"`
	// Amount is a CEL expression over args, principal and state giving what
	// one call uses (a non-negative integer). Default: 1, a count of calls.
	Amount string `yaml:"amount" json:"amount,omitempty"`
	// Limit is the most the window may hold. Required, at least 1.
	Limit int64 `yaml:"limit" json:"limit"`
	// Window is how far back a call's use counts (it slides: a use stops
	// counting exactly Window after it was reserved). Required.
	Window Duration `yaml:"window" json:"window"`
	// Message, when set, is a template shown to the model when the quota
	// refuses a call; toolgate adds how much is used and left, and when
	// enough frees.
	Message string `yaml:"message" json:"message,omitempty"`
}

var quotaNamePattern = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$`)

// normalizeQuotas fills in every tool's quota defaults and checks them,
// and that tools sharing a quota name agree on its limit and window.
func (c *Config) normalizeQuotas() []error {
	var errs []error
	type seen struct {
		tool   string
		limit  int64
		window Duration
	}
	byName := map[string]seen{}
	for _, name := range sortedKeys(c.Tools) {
		t := c.Tools[name]
		if t == nil {
			continue
		}
		if len(t.Quotas) > 0 && t.Effect != "" && t.Effect != "write" {
			errs = append(errs, &Problem{File: c.Path, Key: "tools." + name + ".quotas",
				Why: fmt.Sprintf("quotas count the operations a write begins; this tool's effect is %s", t.Effect)})
		}
		names := map[string]bool{}
		for i := range t.Quotas {
			q := &t.Quotas[i]
			key := fmt.Sprintf("tools.%s.quotas[%d]", name, i)
			bad := func(sub, format string, args ...any) {
				errs = append(errs, &Problem{File: c.Path, Key: key + sub, Why: fmt.Sprintf(format, args...)})
			}
			if strings.TrimSpace(q.Key) == "" {
				q.Key = DefaultQuotaKey
			}
			switch {
			case !quotaNamePattern.MatchString(q.Name):
				bad(".name", "%q is not a quota name: start with a letter, then letters, digits, _ . or - (at most 64)", q.Name)
			case names[q.Name]:
				bad(".name", "quota %q is listed twice on this tool", q.Name)
			}
			names[q.Name] = true
			if q.Limit < 1 {
				bad(".limit", "%d must be at least 1", q.Limit)
			}
			if q.Window <= 0 {
				bad(".window", "a quota needs a window, such as 1h or 24h")
			}
			if q.Name == "" {
				continue
			}
			if prev, ok := byName[q.Name]; ok && (prev.limit != q.Limit || prev.window != q.Window) {
				bad("", "quota %q is also on tool %s with limit %d and window %s: tools sharing a quota must agree on both",
					q.Name, prev.tool, prev.limit, prev.window)
			} else if !ok {
				byName[q.Name] = seen{tool: name, limit: q.Limit, window: q.Window}
			}
		}
	}
	return errs
}

// QuotaWindows returns the window of every quota the tools name, by quota
// name.
func (c *Config) QuotaWindows() map[string]Duration {
	out := map[string]Duration{}
	for _, t := range c.Tools {
		if t == nil {
			continue
		}
		for _, q := range t.Quotas {
			out[q.Name] = q.Window
		}
	}
	return out
}
