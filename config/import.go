package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/types"
)

// Import selects which of a source's tools come in, and under what names.
// The same shape serves every kind of source: an MCP server lists tools, an
// OpenAPI document lists operations.
type Import struct {
	// Tools are the MCP tool names to import, or globs ("*", "get_*").
	// Default ["*"]: every tool the server lists.
	Tools []string `yaml:"tools" json:"tools,omitempty"`
	// Operations are the OpenAPI operationIds to import, or globs.
	// Default ["*"].
	Operations []string `yaml:"operations" json:"operations,omitempty"`
	// Prefix is prepended to every imported name ("crm_" makes crm_search
	// of search), prompts' names included. Default "".
	Prefix string `yaml:"prefix" json:"prefix,omitempty"`
	// Resources are the MCP resources and resource templates to serve
	// through toolgate's MCP server: URIs, URI templates, names or globs
	// ("file:///docs/*"). Default none: a server's resources are served
	// only when named here.
	Resources []string `yaml:"resources" json:"resources,omitempty"`
	// Prompts are the MCP prompts to serve: names or globs. Default none.
	Prompts []string `yaml:"prompts" json:"prompts,omitempty"`
	// Timeout bounds each resources/read, prompts/get and
	// completion/complete sent to the server, connecting included.
	// Default 10s.
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
}

// Source kinds.
const (
	SourceMCP     = "mcp"
	SourceOpenAPI = "openapi"
)

// Source says where an imported tool comes from.
type Source struct {
	// Kind is mcp or openapi (the exports also say config or go for the
	// tools that are not imported).
	Kind string `json:"kind"`
	// Dependency is the dependency that lists the tool.
	Dependency string `json:"dependency,omitempty"`
	// Name is the tool's name at the source: the MCP tool name or the
	// operationId, without the prefix.
	Name string `json:"name,omitempty"`
	// Listing is an MCP tool's own listing fields as the server gave them
	// (title, icons, annotations, _meta) as JSON, re-served unchanged on toolgate's
	// MCP server (docs/mcp-upstreams.md, "What reaches the MCP client"); nil for other sources.
	Listing string `json:"-"`
	// EffectSet says the config's tools: entry sets the effect, which the
	// re-served hints then show instead of the server's annotations.
	EffectSet bool `json:"-"`
}

// ImportedTool is one tool as its source describes it, before the config's
// tools: entry of the same name overrides any of it.
type ImportedTool struct {
	// Name is the tool's name (without the prefix): the name at the
	// source, or, when that is not a valid tool name (an operationId such
	// as repos/get), a name derived from it.
	Name string `json:"name"`
	// SourceName, when not "", is the name at the source that import
	// patterns select and Source records (the operationId); "" means Name.
	SourceName string `json:"source_name,omitempty"`
	// Description is what the model reads.
	Description string `json:"description,omitempty"`
	// InputSchema is the arguments' JSON Schema.
	InputSchema map[string]any `json:"input_schema,omitempty"`
	// OutputSchema is the result's JSON Schema, if the source gives one.
	OutputSchema map[string]any `json:"output_schema,omitempty"`
	// Effect is what the source suggests (MCP annotations, the HTTP
	// method); "" leaves the default, write.
	Effect types.Effect `json:"effect,omitempty"`
	// Request is an OpenAPI operation's method, path and the placement of
	// every argument; nil for MCP.
	Request *Request `json:"request,omitempty"`
	// Listing is, for MCP, the server's title, icons, annotations and
	// _meta of the tool as JSON (see Source.Listing).
	Listing json.RawMessage `json:"listing,omitempty"`
}

// importState is what a config with imports keeps between Normalize (which
// sets aside the tools: entries that only override an imported tool) and
// Imported (which merges them).
type importState struct {
	held     map[string]*Tool // raw entries, never normalized
	resolved bool
}

// patterns are the names or globs the import selects for a source kind.
func (im *Import) patterns(kind string) []string {
	list := im.Tools
	if kind == SourceOpenAPI {
		list = im.Operations
	}
	if len(list) == 0 {
		return []string{"*"}
	}
	return list
}

// selects reports whether name is selected by one of the patterns. A
// glob's * also matches '/', so that "*" and "repos/*" select operationIds
// such as repos/get.
func selects(patterns []string, name string) bool {
	const slash = "\x00"
	name = strings.ReplaceAll(name, "/", slash)
	for _, p := range patterns {
		if ok, err := path.Match(strings.ReplaceAll(p, "/", slash), name); err == nil && ok {
			return true
		}
	}
	return false
}

// Selects reports whether the import selects the source's tool or
// operation named name (the name at the source, without the prefix).
func (im *Import) Selects(kind, name string) bool { return selects(im.patterns(kind), name) }

// sourceName is the name at the source of an imported tool.
func (it *ImportedTool) sourceName() string {
	if it.SourceName != "" {
		return it.SourceName
	}
	return it.Name
}

// sourceKind is the kind of source a dependency is, "" for a plain HTTP one.
func (d *Dependency) sourceKind() string {
	switch {
	case d == nil:
		return ""
	case d.MCP != nil:
		return SourceMCP
	case d.OpenAPI != "", d.Import != nil:
		return SourceOpenAPI
	}
	return ""
}

// checkImport checks that an import has a source to import from. (The
// OpenAPI source adds itself here.)
func (d *Dependency) checkImport() []*Problem {
	if d.Import == nil || d.MCP != nil || d.OpenAPI != "" {
		return d.checkCatalogue()
	}
	return []*Problem{{Key: "import", Why: "has nothing to import from: give the dependency an mcp: section ({url: ...} or {command: [...]}) or an openapi: document"}}
}

// HasImports reports whether some dependency imports tools.
func (c *Config) HasImports() bool {
	for _, d := range c.Dependencies {
		if d != nil && d.Import != nil {
			return true
		}
	}
	return false
}

// ImportsPending reports whether the config imports tools that have not
// been merged in yet (by Imported): it is then not ready for a pipeline.
func (c *Config) ImportsPending() bool { return c.HasImports() && !c.imports.resolved }

// Overrides lists, sorted, the tools: entries held back for an imported
// tool of the same name.
func (c *Config) Overrides() []string { return sortedKeys(c.imports.held) }

// ImportingDependencies lists, sorted, the dependencies that import tools.
func (c *Config) ImportingDependencies() []string {
	var names []string
	for name, d := range c.Dependencies {
		if d != nil && d.Import != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// holdOverrides sets aside, while imports are pending, every tools: entry
// that cannot stand alone: no Go function, no request, and no dependency
// other than an importing one. Imported merges them later.
func (c *Config) holdOverrides() {
	if !c.ImportsPending() {
		return
	}
	for _, name := range sortedKeys(c.Tools) {
		t := c.Tools[name]
		if t == nil || t.Func != nil || t.Request != nil {
			continue
		}
		if t.Dependency != "" {
			if d := c.Dependencies[t.Dependency]; d == nil || d.Import == nil {
				continue
			}
		}
		if c.imports.held == nil {
			c.imports.held = map[string]*Tool{}
		}
		t.Name = name
		c.imports.held[name] = t
		delete(c.Tools, name)
	}
}

// Imported returns a new config: c with the tools its dependencies import
// (lists, by dependency name) merged in and normalized. An imported tool
// takes its name (plus the prefix), description and schemas from the
// source; every key of the tools: entry of the same name wins over the
// source, and a tool declared in full (with a request or a Go function)
// wins over an imported one of the same name. c itself is not changed, so
// that a refreshed list can be merged again.
//
// Problems: a tools: entry that names neither a declared nor an imported
// tool; an import that names (without a glob) a tool the source does not
// have; one name imported from two sources.
func (c *Config) Imported(lists map[string][]ImportedTool) (*Config, error) {
	m := &importMerge{c: c, n: c.importCopy(), from: map[string]string{}, claimed: map[string]bool{}}
	for _, depName := range c.ImportingDependencies() {
		m.mergeDependency(depName, lists[depName])
	}
	m.checkOverridesClaimed()
	n := m.n
	b, _ := json.Marshal(lists)
	sum := sha256.Sum256(append([]byte(c.Version+"\x00"), b...))
	n.Version = hex.EncodeToString(sum[:8])
	if err := n.Normalize(); err != nil {
		m.errs = append(m.errs, err)
	}
	if len(m.errs) > 0 {
		return n, errors.Join(m.errs...)
	}
	return n, nil
}

// importCopy is the start of Imported's new config: c with its own copies
// of the dependencies and the declared tools, marked resolved.
func (c *Config) importCopy() *Config {
	n := *c
	n.imports = importState{resolved: true}
	n.Dependencies = make(map[string]*Dependency, len(c.Dependencies))
	for name, d := range c.Dependencies {
		n.Dependencies[name] = d.clone()
	}
	n.Tools = make(map[string]*Tool, len(c.Tools)+len(c.imports.held))
	for name, t := range c.Tools {
		n.Tools[name] = t.clone()
	}
	return &n
}

// importMerge is one Imported call at work: the config merged from, the
// new config, and what the dependencies merged so far have brought.
type importMerge struct {
	c, n    *Config
	from    map[string]string // imported tool name -> its dependency
	claimed map[string]bool   // held tools: entries an imported tool took
	errs    []error
}

// bad records a problem at key of the config's file.
func (m *importMerge) bad(key, format string, args ...any) {
	m.errs = append(m.errs, &Problem{File: m.c.Path, Key: key, Why: fmt.Sprintf(format, args...)})
}

// mergeDependency merges the tools of one importing dependency's list that
// its import selects, in name order, and then checks that every plain
// (not glob) name of the import is on the list.
func (m *importMerge) mergeDependency(depName string, listed []ImportedTool) {
	d := m.c.Dependencies[depName]
	kind := d.sourceKind()
	patterns := d.Import.patterns(kind)
	list := slices.Clone(listed)
	slices.SortFunc(list, func(a, b ImportedTool) int { return strings.Compare(a.Name, b.Name) })
	have := map[string]bool{}
	for _, it := range list {
		have[it.sourceName()] = true
		if selects(patterns, it.sourceName()) {
			m.mergeTool(depName, kind, it)
		}
	}
	for _, p := range patterns {
		if !isGlob(p) && !have[p] {
			what := "tool"
			if kind == SourceOpenAPI {
				what = "operation"
			}
			m.bad("dependencies."+depName+".import", "%s has no %s named %q (it has: %s)", depName, what, p, joinSome(slices.Sorted(maps.Keys(have)), 30))
		}
	}
}

// mergeTool adds one selected tool of the dependency under its imported
// name, with the held tools: entry of that name laid over it. A tool
// declared in full keeps the name; one name from two dependencies is a
// problem.
func (m *importMerge) mergeTool(depName, kind string, it ImportedTool) {
	name := ImportedName(m.c.Dependencies[depName].Import.Prefix, it.Name)
	if _, declared := m.c.Tools[name]; declared {
		return // declared in full: the config wins outright
	}
	if other, dup := m.from[name]; dup {
		m.bad("dependencies."+depName+".import", "tool %q is imported from both %s and %s; give one of them a prefix", name, other, depName)
		return
	}
	m.from[name] = depName
	t := &Tool{
		Name: name, Description: it.Description, Dependency: depName,
		Effect: it.Effect, InputSchema: it.InputSchema, OutputSchema: it.OutputSchema,
		Source: &Source{Kind: kind, Dependency: depName, Name: it.sourceName(), Listing: string(it.Listing)},
	}
	if it.Request != nil {
		r := *it.Request
		t.Request = &r
	}
	if raw := m.c.imports.held[name]; raw != nil {
		override(t, raw.clone())
		m.claimed[name] = true
	}
	m.n.Tools[name] = t
}

// checkOverridesClaimed reports every held tools: entry that no imported
// tool took: it names no tool at all.
func (m *importMerge) checkOverridesClaimed() {
	for _, name := range sortedKeys(m.c.imports.held) {
		if !m.claimed[name] {
			m.bad("tools."+name, "names no declared tool and no tool imported from %s (imported: %s)",
				strings.Join(m.c.ImportingDependencies(), ", "), joinOrNone(sortedKeys(m.from)))
		}
	}
}

// ImportedName is the name a source's tool gets: the prefix, then the
// source's name with every character a model API refuses in a tool name
// (anything but letters, digits, _ and -; MCP also allows . and /) made _,
// at most 64 characters. A name with non-ASCII characters (each made one _)
// also ends in _ and 8 hex digits of its hash, so that café and cafè stay
// two tools. The source's own name stays in Tool.Source.
func ImportedName(prefix, name string) string {
	full := prefix + name
	b := make([]byte, 0, len(full))
	ascii := true
	for _, r := range full {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-':
			b = append(b, byte(r))
		default:
			ascii = ascii && r < utf8.RuneSelf
			b = append(b, '_')
		}
	}
	if ascii {
		return string(b[:min(len(b), 64)])
	}
	sum := sha256.Sum256([]byte(full))
	return string(b[:min(len(b), 64-9)]) + "_" + hex.EncodeToString(sum[:4])
}

// override sets on t every key the config's entry gives (a non-zero
// field), so that the config always wins over what the source said. The
// name and the source stay the import's.
func override(t, entry *Tool) {
	if t.Source != nil && entry.Effect != "" {
		t.Source.EffectSet = true // the hints then show the config's effect
	}
	tv, ev := reflect.ValueOf(t).Elem(), reflect.ValueOf(entry).Elem()
	for i := range tv.NumField() {
		switch tv.Type().Field(i).Name {
		case "Name", "Source":
			continue
		}
		if f := ev.Field(i); !f.IsZero() {
			tv.Field(i).Set(f)
		}
	}
}

// clone copies a tool deeply enough that normalizing the copy writes
// nothing the original shares.
func (t *Tool) clone() *Tool {
	if t == nil {
		return nil
	}
	c := *t
	if t.Request != nil {
		r := *t.Request
		r.Params = maps.Clone(t.Request.Params)
		c.Request = &r
	}
	c.Rules = slices.Clone(t.Rules)
	c.Quotas = slices.Clone(t.Quotas)
	if t.Owner != nil {
		o := *t.Owner
		c.Owner = &o
	}
	if t.Verify != nil {
		v := *t.Verify
		c.Verify = &v
	}
	return &c
}

// clone copies a dependency deeply enough that normalizing the copy writes
// nothing the original shares.
func (d *Dependency) clone() *Dependency {
	if d == nil {
		return nil
	}
	c := *d
	if d.MCP != nil {
		m := *d.MCP
		m.Command = slices.Clone(d.MCP.Command)
		c.MCP = &m
	}
	return &c
}

// joinSome is joinOrNone of at most n names, saying how many more there are.
func joinSome(names []string, n int) string {
	if len(names) <= n {
		return joinOrNone(names)
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

func joinOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
