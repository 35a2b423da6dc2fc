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
	client := opts.Client
	if client == nil {
		// No redirects: a 3xx could send the fetch to any host.
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
	if err := r.preload(ctx, root); err != nil {
		return nil, err
	}
	top, ok := r.docs[root].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not an OpenAPI document (not an object)", root)
	}
	version, _ := top["openapi"].(string)
	if !strings.HasPrefix(version, "3.0") && !strings.HasPrefix(version, "3.1") {
		if _, swagger := top["swagger"]; swagger {
			return nil, fmt.Errorf("%s is Swagger 2.0; toolgate reads OpenAPI 3.0 and 3.1 (convert it first)", root)
		}
		return nil, fmt.Errorf("%s: openapi: %q is not a version toolgate reads (3.0.x, 3.1.x)", root, version)
	}
	paths, _ := top["paths"].(map[string]any)
	c := newConverter(r)
	doc := &Document{Report: &Report{Dependency: d.Name, Document: root, Version: version}}
	owner := map[string]string{} // tool name -> the operation that has it
	collisions := map[string]*Collision{}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item, base, err := r.deref(root, paths[p])
		if err != nil {
			doc.Report.Skipped = append(doc.Report.Skipped, Skipped{Operation: p, Why: "the path item cannot be read: " + err.Error()})
			continue
		}
		shared, _ := item["parameters"].([]any)
		for _, m := range methods {
			raw, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			o := &operation{method: strings.ToUpper(m), path: p, op: raw, base: base, pathParams: shared, pathBase: base}
			o.id, _ = raw["operationId"].(string)
			doc.Report.Operations++
			t, why := c.tool(o, d.Name)
			if why != "" {
				doc.Report.Skipped = append(doc.Report.Skipped, Skipped{Operation: o.label(), Why: why})
				continue
			}
			if first, taken := owner[t.Name]; taken {
				col := collisions[t.Name]
				if col == nil {
					col = &Collision{Name: t.Name, Operations: []string{first}, Kept: first}
					collisions[t.Name] = col
				}
				col.Operations = append(col.Operations, o.label())
				doc.Report.Skipped = append(doc.Report.Skipped, Skipped{Operation: o.label(), Why: fmt.Sprintf("its tool name %s is already %s's", t.Name, first)})
				continue
			}
			owner[t.Name] = o.label()
			doc.Tools = append(doc.Tools, t)
			doc.Report.Tools++
			if d.Import == nil || d.Import.Selects(config.SourceOpenAPI, sourceName(t)) {
				doc.Report.Imported++
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(collisions)) {
		doc.Report.Collisions = append(doc.Report.Collisions, *collisions[name])
	}
	return doc, nil
}

func sourceName(t config.ImportedTool) string {
	if t.SourceName != "" {
		return t.SourceName
	}
	return t.Name
}
