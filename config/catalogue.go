package config

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Catalogue is what one API key sees and may call: the tools its
// auth.keys[].tools list matches (every tool when it has none).
//
// A call of a tool outside Callable is answered unknown_tool, exactly as if
// the tool did not exist. Lists (GET /v1/tools, MCP tools/list, `toolgate
// tools --key`) show Listed: Callable narrowed, when the key pins a
// principal, to the tools whose permission that principal holds (a tool
// the principal cannot use would only cost the model a step and a
// forbidden).
type Catalogue struct {
	// Key is the auth.keys entry's name; "" for a caller without a key (the
	// library, development mode).
	Key string
	// Callable are the tools the key may call, sorted by name.
	Callable []string
	// Listed are the tools its lists show, sorted by name.
	Listed []string

	callable map[string]struct{}
	listed   map[string]struct{}
}

// Has reports whether the key may call the tool. A nil catalogue has
// every tool.
func (c *Catalogue) Has(tool string) bool {
	if c == nil {
		return true
	}
	_, ok := c.callable[tool]
	return ok
}

// Lists reports whether the key's lists show the tool. A nil catalogue
// shows every tool.
func (c *Catalogue) Lists(tool string) bool {
	if c == nil {
		return true
	}
	_, ok := c.listed[tool]
	return ok
}

// Catalogues holds every key's catalogue, resolved against one config's
// tools. It is immutable and safe for concurrent use.
type Catalogues struct {
	all   *Catalogue
	byKey map[string]*Catalogue
	none  bool // no keys are configured (development mode)
}

// For returns the catalogue of the key with that name. The empty name
// (the library, a run created without a key, development mode) sees every
// tool. A name that is not among the configured keys (a key a reload
// removed) sees none: what it may call is unknown, so nothing is shown.
// With no keys configured at all, every name sees every tool.
func (cs *Catalogues) For(key string) *Catalogue {
	if cs == nil {
		return nil
	}
	if c, ok := cs.byKey[key]; ok {
		return c
	}
	if key == "" || cs.none {
		return cs.all
	}
	return &Catalogue{Key: key, Callable: []string{}, Listed: []string{}}
}

// MatchTool reports whether a tools: entry (a name or a glob of path.Match:
// *, ?, [a-z]) matches a tool name. A malformed glob matches nothing.
func MatchTool(pattern, tool string) bool {
	if !isGlob(pattern) {
		return pattern == tool
	}
	ok, err := path.Match(pattern, tool)
	return err == nil && ok
}

// isGlob reports whether a tools: entry is a glob rather than a name.
func isGlob(pattern string) bool { return strings.ContainsAny(pattern, `*?[\`) }

// Catalogues resolves each key's tools: list against the config's tools
// (declared and imported alike: call it once every tool is known, as
// validate.Compile does). Each entry that is malformed or matches no tool
// is a problem naming the entry and the key.
func (c *Config) Catalogues() (*Catalogues, []*Problem) {
	names := c.ToolNames()
	all := &Catalogue{Callable: names, Listed: names, callable: make(map[string]struct{}, len(names))}
	for _, n := range names {
		all.callable[n] = struct{}{}
	}
	all.listed = all.callable
	cs := &Catalogues{all: all, byKey: make(map[string]*Catalogue, len(c.Auth.Keys)), none: len(c.Auth.Keys) == 0}
	var ps []*Problem
	for i, k := range c.Auth.Keys {
		cat, kps := c.catalogue(i, k, names)
		ps = append(ps, kps...)
		if _, dup := cs.byKey[k.Name]; !dup {
			cs.byKey[k.Name] = cat
		}
	}
	return cs, ps
}

// catalogue resolves one key's list (names sorted).
func (c *Config) catalogue(i int, k Key, names []string) (*Catalogue, []*Problem) {
	var ps []*Problem
	cat := &Catalogue{Key: k.Name}
	if k.Tools == nil {
		cat.Callable, cat.callable = names, make(map[string]struct{}, len(names))
		for _, n := range names {
			cat.callable[n] = struct{}{}
		}
	} else {
		ps = c.restrictCallable(cat, i, k, names)
	}
	if k.Principal == nil {
		cat.Listed, cat.listed = cat.Callable, cat.callable
		return cat, ps
	}
	cat.Listed, cat.listed = []string{}, map[string]struct{}{}
	for _, n := range cat.Callable {
		if t := c.Tools[n]; t != nil && k.Principal.Can(t.Permission) {
			cat.Listed = append(cat.Listed, n)
			cat.listed[n] = struct{}{}
		}
	}
	return cat, ps
}

// restrictCallable makes the tools the key k (auth.keys[i]) may call
// those its tools: list names or matches, in the order of names. A
// pattern that is malformed or matches no tool is a problem, and so is an
// empty list.
func (c *Config) restrictCallable(cat *Catalogue, i int, k Key, names []string) []*Problem {
	var ps []*Problem
	cat.Callable, cat.callable = []string{}, map[string]struct{}{}
	if len(k.Tools) == 0 {
		ps = append(ps, &Problem{File: c.Path, Key: fmt.Sprintf("auth.keys[%d].tools", i),
			Why: fmt.Sprintf("is empty, so key %s would see no tool at all: list the tools it may use, or leave tools: out for every tool", k.Name)})
	}
	for j, pattern := range k.Tools {
		key := fmt.Sprintf("auth.keys[%d].tools[%d]", i, j)
		if why := badPattern(pattern); why != "" {
			ps = append(ps, &Problem{File: c.Path, Key: key, Why: fmt.Sprintf("%q (key %s) %s", pattern, k.Name, why)})
			continue
		}
		matched := false
		if !isGlob(pattern) {
			if _, matched = c.Tools[pattern]; matched {
				cat.callable[pattern] = struct{}{}
			}
		} else {
			for _, n := range names {
				if MatchTool(pattern, n) {
					matched = true
					cat.callable[n] = struct{}{}
				}
			}
		}
		if !matched && !c.ImportsPending() {
			// While imports are pending (check --offline), the entry may
			// name an imported tool: it cannot be judged.
			ps = append(ps, &Problem{File: c.Path, Key: key,
				Why: fmt.Sprintf("%q (key %s) matches no tool; the tools are: %s", pattern, k.Name, shortList(names))})
		}
	}
	for _, n := range names {
		if _, ok := cat.callable[n]; ok {
			cat.Callable = append(cat.Callable, n)
		}
	}
	return ps
}

// badPattern says what is wrong with a tools: entry, "" when nothing is.
func badPattern(p string) string {
	if strings.TrimSpace(p) == "" {
		return "is empty: name a tool or a glob such as orders_*"
	}
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Sprintf("is not a valid glob (%v): use * ? and [a-z]", err)
	}
	return ""
}

// shortList names at most 10 tools, saying how many more there are.
func shortList(names []string) string {
	const most = 10
	if len(names) == 0 {
		return "none"
	}
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return strings.Join(slices.Clone(names[:most]), ", ") + fmt.Sprintf(", … (%d more)", len(names)-most)
}
