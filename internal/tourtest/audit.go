package tourtest

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
)

// Config is one documented config: a YAML block of a page or a file of
// examples/.
type Config struct {
	// Where says where it is documented ("docs/retries.md:22").
	Where string
	// Text is the YAML.
	Text string
}

// SimCommand is one documented `toolgate sim payments` command.
type SimCommand struct {
	Where string
	Text  string
}

var simPattern = regexp.MustCompile(`toolgate sim payments[^\n` + "`" + `]*`)

// SimCommands finds the `toolgate sim payments` commands of a text.
func SimCommands(where, text string) []SimCommand {
	var out []SimCommand
	for _, m := range simPattern.FindAllString(text, -1) {
		out = append(out, SimCommand{Where: where, Text: strings.TrimSpace(m)})
	}
	return out
}

var listenPattern = regexp.MustCompile(`--listen[ =](\S+)`)

// port is the port a sim command listens on (the simulator's default,
// 9001, without --listen).
func (c SimCommand) port() string {
	m := listenPattern.FindStringSubmatch(c.Text)
	if m == nil {
		return "9001"
	}
	_, port, ok := strings.Cut(m[1], ":")
	if !ok {
		return ""
	}
	return port
}

func (c SimCommand) honoursKeys() bool {
	return regexp.MustCompile(`--honour-keys\b(=true)?`).MatchString(c.Text) && !strings.Contains(c.Text, "--honour-keys=false")
}

// claims are the loopback ports of the dependencies a config says honour
// the operation key: those of a tool with idempotency.header (a tool that
// names no dependency claims it for every dependency of the config, as
// an override of an imported tool may).
func claims(cfg Config) (map[string][]string, error) {
	var doc struct {
		Dependencies map[string]struct {
			BaseURL string `yaml:"base_url"`
			MCP     struct {
				URL string `yaml:"url"`
			} `yaml:"mcp"`
		} `yaml:"dependencies"`
		Tools map[string]struct {
			Dependency  string `yaml:"dependency"`
			Idempotency struct {
				Header string `yaml:"header"`
			} `yaml:"idempotency"`
		} `yaml:"tools"`
	}
	if err := yaml.Unmarshal([]byte(cfg.Text), &doc); err != nil {
		return nil, err
	}
	out := map[string][]string{} // port -> the tools that claim it
	for name, t := range doc.Tools {
		if t.Idempotency.Header == "" {
			continue
		}
		for depName, d := range doc.Dependencies {
			if t.Dependency != "" && t.Dependency != depName {
				continue
			}
			raw := d.BaseURL
			if raw == "" {
				raw = d.MCP.URL
			}
			u, err := url.Parse(raw)
			if err != nil || u.Port() == "" {
				continue
			}
			out[u.Port()] = append(out[u.Port()], name)
		}
	}
	return out, nil
}

// Duplicates pairs a config with the sim commands it is documented with:
// a config that says a dependency honours the operation key
// (idempotency.header) must not be documented with a simulator on that
// dependency's port that does not honour it (no --honour-keys): together
// they make a duplicate effect on every re-sent write.
func Duplicates(cfg Config, sims []SimCommand) ([]string, error) {
	ports, err := claims(cfg)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, s := range sims {
		tools, ok := ports[s.port()]
		if !ok || s.honoursKeys() {
			continue
		}
		sort.Strings(tools)
		problems = append(problems, fmt.Sprintf(
			"%s declares idempotency.header for %s (port %s), but %s starts that provider without --honour-keys (%q): every re-send would be a new refund",
			cfg.Where, strings.Join(tools, ", "), s.port(), s.Where, s.Text))
	}
	return problems, nil
}

// FullConfig says whether a YAML text is a whole config rather than a part
// of one: it declares both dependencies and tools at its top level.
func FullConfig(text string) bool {
	var top map[string]any
	if err := yaml.Unmarshal([]byte(text), &top); err != nil {
		return false
	}
	_, deps := top["dependencies"]
	_, tools := top["tools"]
	return deps && tools
}
