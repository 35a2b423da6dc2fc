package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// MCP says how to reach an MCP server: over streamable HTTP (URL) or as a
// stdio subprocess that toolgate starts, restarts and stops (Command).
// Exactly one of URL and Command is set.
type MCP struct {
	// URL is the server's streamable HTTP endpoint, such as
	// http://127.0.0.1:9100/mcp. Give url or command, not both.
	URL string `yaml:"url" json:"url,omitempty"`
	// Headers are sent on every HTTP request to url (for example
	// Authorization). Default none.
	Headers map[string]string `yaml:"headers" json:"-"`
	// Command is the program and its arguments, run without a shell. A
	// relative program path containing a slash is relative to the config
	// file's directory; a bare name is looked up in PATH.
	Command []string `yaml:"command" json:"command,omitempty"`
	// Env is added to the subprocess's environment (which otherwise is
	// toolgate's own). Default none.
	Env map[string]string `yaml:"env" json:"-"`
	// Dir is the subprocess's working directory. Default: the config
	// file's directory.
	Dir string `yaml:"dir" json:"dir,omitempty"`
	// RestartBase is the wait before restarting a stdio server that died;
	// each later restart waits twice as long as the one before, at most
	// restart_cap. Default 200ms.
	RestartBase Duration `yaml:"restart_base" json:"restart_base"`
	// RestartCap is the longest wait between two restarts. Default 30s.
	RestartCap Duration `yaml:"restart_cap" json:"restart_cap"`
}

// Defaults of MCP.
const (
	DefaultMCPRestartBase = 200 * time.Millisecond
	DefaultMCPRestartCap  = 30 * time.Second
)

// Stdio reports whether the server is a subprocess.
func (m *MCP) Stdio() bool { return m != nil && len(m.Command) > 0 }

// normalize checks the transport and fills in the defaults. dir is the
// config file's directory ("" when built in Go).
func (m *MCP) normalize(dir string) []*Problem {
	var ps []*Problem
	bad := func(key, format string, args ...any) {
		ps = append(ps, &Problem{Key: key, Why: fmt.Sprintf(format, args...)})
	}
	switch {
	case m.URL != "" && len(m.Command) > 0:
		bad("mcp", "give either url (streamable HTTP) or command (stdio), not both")
	case m.URL == "" && len(m.Command) == 0:
		bad("mcp", `needs url (streamable HTTP, e.g. http://127.0.0.1:9100/mcp) or command (a stdio server, e.g. ["payments-mcp", "--stdio"])`)
	case m.URL != "":
		if u, err := url.Parse(m.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("mcp.url", "%q must be an http:// or https:// URL", m.URL)
		}
		if len(m.Env) > 0 {
			bad("mcp.env", "env is for a stdio server (command); an HTTP server takes headers")
		}
	default:
		if m.Command[0] == "" {
			bad("mcp.command", "the first element names the program to run")
		}
		if len(m.Headers) > 0 {
			bad("mcp.headers", "headers are for an HTTP server (url); a stdio server takes env")
		}
		if dir != "" && strings.Contains(m.Command[0], "/") && !filepath.IsAbs(m.Command[0]) {
			if abs, err := filepath.Abs(filepath.Join(dir, m.Command[0])); err == nil {
				m.Command[0] = abs
			}
		}
		if m.Dir == "" {
			m.Dir = dir
		}
	}
	if m.RestartBase == 0 {
		m.RestartBase = Duration(DefaultMCPRestartBase)
	}
	if m.RestartCap == 0 {
		m.RestartCap = Duration(DefaultMCPRestartCap)
	}
	if m.RestartCap < m.RestartBase {
		bad("mcp.restart_cap", "%s is below restart_base %s", m.RestartCap, m.RestartBase)
	}
	return ps
}
