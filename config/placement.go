package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Where an argument of an imported OpenAPI operation is placed.
const (
	InPath   = "path"
	InQuery  = "query"
	InHeader = "header"
	InBody   = "body"
)

// Param says where one argument goes in the request, as the OpenAPI
// document describes the operation.
type Param struct {
	// In is path, query, header or body.
	In string `json:"in"`
	// Name is the name in the document: the path template's {Name}, the
	// query key, the header name, or the body's property. It differs from
	// the argument's name when a body property was renamed because a
	// parameter has its name. "" with In body: the argument is the whole
	// body (a body that is not an object with properties).
	Name string `json:"name,omitempty"`
	// Required marks a body that must be sent even when empty.
	Required bool `json:"required,omitempty"`
	// Style is how a query array or object is written, from the
	// parameter's style and explode: "" repeats the key for each item
	// (form, exploded: the default), "form" joins the items with commas
	// (form, not exploded), "spaceDelimited" and "pipeDelimited" join them
	// with a space or a |, "deepObject" writes name[key]=value.
	Style string `json:"style,omitempty"`
}

// Query styles of Param.Style.
const (
	StyleForm           = "form"
	StyleSpaceDelimited = "spaceDelimited"
	StylePipeDelimited  = "pipeDelimited"
	StyleDeepObject     = "deepObject"
)

// IsURL reports whether an openapi: value is an http(s) URL rather than a
// file path.
func IsURL(ref string) bool {
	return strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://")
}

// normalizeOpenAPI checks the openapi: and import: keys of a dependency,
// makes a relative document path absolute (relative to dir, the config
// file's directory) and gives an OpenAPI dependency without import: the
// default one (every operation).
func (d *Dependency) normalizeOpenAPI(dir string) []*Problem {
	var ps []*Problem
	bad := func(key, format string, args ...any) {
		ps = append(ps, &Problem{Key: key, Why: fmt.Sprintf(format, args...)})
	}
	if d.OpenAPI == "" {
		return ps // checkImport says when import: has nothing to import from
	}
	if d.MCP != nil {
		bad("openapi", "a dependency is an MCP server (mcp:) or an HTTP API described by OpenAPI (openapi:), not both")
	}
	if IsURL(d.OpenAPI) {
		if u, err := url.Parse(d.OpenAPI); err != nil || u.Host == "" {
			bad("openapi", "%q is not a valid URL", d.OpenAPI)
		}
	} else if dir != "" && !filepath.IsAbs(d.OpenAPI) {
		// Absolute at once, so that normalizing again changes nothing.
		p := filepath.Join(dir, d.OpenAPI)
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		d.OpenAPI = p
	}
	if d.Import == nil {
		d.Import = &Import{}
	}
	if len(d.Import.Tools) > 0 {
		bad("import.tools", "an OpenAPI document has operations: use import: {operations: [...]} (operationIds or globs)")
	}
	return ps
}
