package config

import (
	"fmt"
	"time"
)

// DefaultCatalogueTimeout is the default of Import.Timeout.
const DefaultCatalogueTimeout = 10 * time.Second

// An MCP server's resources, resource templates and prompts are served
// through toolgate's MCP server only when its import names them:
//
//	import: {tools: ["*"], resources: ["file:///docs/*", "greeting"], prompts: ["*"]}
//
// Unlike tools, the default is none: a server's resources are data that
// toolgate's keys did not see before, so an operator opts in.
//
// A resources: entry matches a resource by its URI or its name, and a
// resource template by its URI template or its name; a prompts: entry
// matches a prompt's name at the server (without the prefix). A glob's *
// also matches '/'.

// SelectsResource reports whether the import selects the resource (or the
// template) with that URI (or URI template) or name. A nil import selects
// none.
func (im *Import) SelectsResource(uri, name string) bool {
	if im == nil || len(im.Resources) == 0 {
		return false
	}
	return selects(im.Resources, uri) || (name != "" && selects(im.Resources, name))
}

// SelectsPrompt reports whether the import selects the prompt with that
// name at the server.
func (im *Import) SelectsPrompt(name string) bool {
	return im != nil && len(im.Prompts) > 0 && selects(im.Prompts, name)
}

// ServesCatalogue reports whether the import serves resources or prompts.
func (im *Import) ServesCatalogue() bool {
	return im != nil && (len(im.Resources) > 0 || len(im.Prompts) > 0)
}

// CatalogueTimeout is Timeout, or its default.
func (im *Import) CatalogueTimeout() time.Duration {
	if im == nil || im.Timeout <= 0 {
		return DefaultCatalogueTimeout
	}
	return im.Timeout.D()
}

// SeesResource reports whether the key may list and read the imported
// resource (or template) with that URI (or URI template) or name: its
// resources: list matches one of them, or it has none.
func (k *Key) SeesResource(uri, name string) bool {
	if k == nil || k.Resources == nil {
		return true
	}
	return selects(k.Resources, uri) || (name != "" && selects(k.Resources, name))
}

// SeesPrompt reports whether the key may list and get the imported prompt
// of that name (as toolgate serves it: with the import's prefix).
func (k *Key) SeesPrompt(name string) bool {
	if k == nil || k.Prompts == nil {
		return true
	}
	return selects(k.Prompts, name)
}

// checkCatalogue checks an import's resources:, prompts: and timeout.
func (d *Dependency) checkCatalogue() []*Problem {
	im := d.Import
	if im == nil {
		return nil
	}
	var ps []*Problem
	if d.MCP == nil && (len(im.Resources) > 0 || len(im.Prompts) > 0) {
		ps = append(ps, &Problem{Key: "import", Why: "resources and prompts come from an MCP server: this dependency has no mcp: section"})
	}
	if im.Timeout < 0 {
		ps = append(ps, &Problem{Key: "import.timeout", Why: fmt.Sprintf("%s must not be negative", im.Timeout)})
	}
	ps = append(ps, checkPatterns("import.resources", im.Resources)...)
	return append(ps, checkPatterns("import.prompts", im.Prompts)...)
}

// checkCatalogue checks a key's resources: and prompts: lists.
func (k *Key) checkCatalogue() []*Problem {
	ps := checkPatterns("resources", k.Resources)
	return append(ps, checkPatterns("prompts", k.Prompts)...)
}

// checkPatterns is a problem for each malformed entry of a list of names
// or globs.
func checkPatterns(key string, list []string) []*Problem {
	var ps []*Problem
	for i, p := range list {
		if why := badPattern(p); why != "" {
			ps = append(ps, &Problem{Key: fmt.Sprintf("%s[%d]", key, i), Why: fmt.Sprintf("%q %s", p, why)})
		}
	}
	return ps
}
