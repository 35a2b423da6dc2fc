package openapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/config"
)

// DefaultFetchTimeout bounds fetching a document named by URL when
// Options.Client is nil.
const DefaultFetchTimeout = 30 * time.Second

// Options configure an import. Every zero value is a documented default.
type Options struct {
	// Client fetches documents named by URL (and the URLs their $refs
	// name). Default: a client with a 30 s timeout that follows no
	// redirects.
	Client *http.Client
}

// Document is one imported document: its operations as tools and the
// report of what became of each.
type Document struct {
	// Tools are the operations that became tools, whether the import
	// selects them or not (config.Imported applies the selection).
	Tools []config.ImportedTool
	// Report says how many were imported, skipped and why, and the name
	// collisions.
	Report *Report
}

// Has reports whether some dependency of cfg has an OpenAPI document.
func Has(cfg *config.Config) bool {
	for _, d := range cfg.Dependencies {
		if d != nil && d.OpenAPI != "" {
			return true
		}
	}
	return false
}

// ImportAll reads the document of every dependency with openapi: and
// returns their tools by dependency name (what config.Imported takes) and
// one report per document, sorted by dependency. The error joins every
// document that cannot be read, and every name in an import: that names
// no operation of its document.
func ImportAll(ctx context.Context, cfg *config.Config, opts Options) (map[string][]config.ImportedTool, []*Report, error) {
	lists := map[string][]config.ImportedTool{}
	var reports []*Report
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(cfg.Dependencies)) {
		d := cfg.Dependencies[name]
		if d == nil || d.OpenAPI == "" {
			continue
		}
		doc, err := Load(ctx, d, opts)
		if err != nil {
			errs = append(errs, &config.Problem{File: cfg.Path, Key: "dependencies." + name + ".openapi", Why: err.Error()})
			continue
		}
		lists[name] = doc.Tools
		shadowed(cfg, d, doc)
		reports = append(reports, doc.Report)
		errs = append(errs, unknownOperations(cfg, name, d, doc)...)
	}
	return lists, reports, errors.Join(errs...)
}

// shadowed adds to the report the selected operations whose tool name
// (with the prefix) a tool declared in full in tools: already has: the
// declared tool wins, and the operation is not imported.
func shadowed(cfg *config.Config, d *config.Dependency, doc *Document) {
	for _, t := range doc.Tools {
		if !d.Import.Selects(config.SourceOpenAPI, sourceName(t)) {
			continue
		}
		name := config.ImportedName(d.Import.Prefix, t.Name)
		if cfg.Tools[name] == nil {
			continue
		}
		doc.Report.Imported--
		doc.Report.Collisions = append(doc.Report.Collisions, Collision{Name: name, Operations: []string{sourceName(t), "tools." + name}, Kept: "tools." + name})
	}
}

// unknownOperations are the import's names (not globs) that name no
// operation of the document.
func unknownOperations(cfg *config.Config, dep string, d *config.Dependency, doc *Document) []error {
	if d.Import == nil {
		return nil
	}
	have := map[string]bool{}
	for _, t := range doc.Tools {
		have[sourceName(t)] = true
	}
	skipped := map[string]string{}
	for _, s := range doc.Report.Skipped {
		skipped[s.Operation] = s.Why
	}
	var errs []error
	for _, p := range d.Import.Operations {
		if strings.ContainsAny(p, `*?[\`) || have[p] {
			continue
		}
		why := fmt.Sprintf("%s has no operation %q", d.OpenAPI, p)
		if s, ok := skipped[p]; ok {
			why = fmt.Sprintf("operation %q of %s cannot be imported: %s", p, d.OpenAPI, s)
		}
		errs = append(errs, &config.Problem{File: cfg.Path, Key: "dependencies." + dep + ".import.operations", Why: why})
	}
	return errs
}

// Load reads a dependency's document (and every file or URL its $refs
// name) and converts each operation.
func Load(ctx context.Context, d *config.Dependency, opts Options) (*Document, error) {
	r, err := newReader(d, opts.Client)
	if err != nil {
		return nil, err
	}
	if err := r.preload(ctx, r.root); err != nil {
		return nil, err
	}
	top, version, err := r.rootDocument()
	if err != nil {
		return nil, err
	}
	paths, _ := top["paths"].(map[string]any)
	b := &documentBuilder{dep: d, c: newConverter(r), owner: map[string]string{}, collisions: map[string]*Collision{},
		doc: &Document{Report: &Report{Dependency: d.Name, Document: r.root, Version: version}}}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item, base, err := r.deref(r.root, paths[p])
		if err != nil {
			b.skip(p, "the path item cannot be read: "+err.Error())
			continue
		}
		b.addPath(p, item, base)
	}
	return b.finish(), nil
}

// newReader is the reader of d's document: through client (when nil, one
// that follows no redirect, since a 3xx could send the fetch to any host),
// from the document's location and the $ref origins d allows.
func newReader(d *config.Dependency, client *http.Client) (*reader, error) {
	if client == nil {
		client = &http.Client{Timeout: DefaultFetchTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	root, err := absLocation(d.OpenAPI)
	if err != nil {
		return nil, err
	}
	r := &reader{client: client, docs: map[string]any{}, root: root, origins: map[string]bool{}}
	for _, o := range d.OpenAPIRefOrigins {
		r.origins[origin(o)] = true
	}
	return r, nil
}

// rootDocument is the preloaded root document and its openapi version,
// which must be 3.0 or 3.1.
func (r *reader) rootDocument() (top map[string]any, version string, err error) {
	top, ok := r.docs[r.root].(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("%s is not an OpenAPI document (not an object)", r.root)
	}
	version, _ = top["openapi"].(string)
	if !strings.HasPrefix(version, "3.0") && !strings.HasPrefix(version, "3.1") {
		if _, swagger := top["swagger"]; swagger {
			return nil, "", fmt.Errorf("%s is Swagger 2.0; toolgate reads OpenAPI 3.0 and 3.1 (convert it first)", r.root)
		}
		return nil, "", fmt.Errorf("%s: openapi: %q is not a version toolgate reads (3.0.x, 3.1.x)", r.root, version)
	}
	return top, version, nil
}

// documentBuilder converts a document's operations, path by path, into
// its Document: the tools and the report of what was skipped and why.
type documentBuilder struct {
	dep        *config.Dependency
	c          *converter
	doc        *Document
	owner      map[string]string // tool name -> the operation that has it
	collisions map[string]*Collision
}

// skip reports the operation (or path) labelled label as not imported.
func (b *documentBuilder) skip(label, why string) {
	b.doc.Report.Skipped = append(b.doc.Report.Skipped, Skipped{Operation: label, Why: why})
}

// addPath converts each operation of the path item at path p, read from
// the document at base. The first operation to get a tool name keeps it;
// a later one is skipped and recorded as a collision.
func (b *documentBuilder) addPath(p string, item map[string]any, base string) {
	shared, _ := item["parameters"].([]any)
	for _, m := range methods {
		raw, ok := item[m].(map[string]any)
		if !ok {
			continue
		}
		o := &operation{method: strings.ToUpper(m), path: p, op: raw, base: base, pathParams: shared, pathBase: base}
		o.id, _ = raw["operationId"].(string)
		b.doc.Report.Operations++
		t, why := b.c.tool(o, b.dep.Name)
		if why != "" {
			b.skip(o.label(), why)
			continue
		}
		if first, taken := b.owner[t.Name]; taken {
			b.collide(t.Name, first, o.label())
			continue
		}
		b.owner[t.Name] = o.label()
		b.doc.Tools = append(b.doc.Tools, t)
		b.doc.Report.Tools++
		if b.dep.Import == nil || b.dep.Import.Selects(config.SourceOpenAPI, sourceName(t)) {
			b.doc.Report.Imported++
		}
	}
}

// collide records that the operation labelled label would get the tool
// name that the operation first already has, and skips it.
func (b *documentBuilder) collide(name, first, label string) {
	col := b.collisions[name]
	if col == nil {
		col = &Collision{Name: name, Operations: []string{first}, Kept: first}
		b.collisions[name] = col
	}
	col.Operations = append(col.Operations, label)
	b.skip(label, fmt.Sprintf("its tool name %s is already %s's", name, first))
}

// finish is the document, its collisions in name order.
func (b *documentBuilder) finish() *Document {
	for _, name := range slices.Sorted(maps.Keys(b.collisions)) {
		b.doc.Report.Collisions = append(b.doc.Report.Collisions, *b.collisions[name])
	}
	return b.doc
}

// sourceName is the name at the source that import patterns select: the
// operationId, or the tool name when they are the same.
func sourceName(t config.ImportedTool) string {
	if t.SourceName != "" {
		return t.SourceName
	}
	return t.Name
}
