package openapi

import (
	"fmt"
	"io"
	"strings"
)

// Report says what became of one document's operations.
type Report struct {
	// Dependency is the dependency whose openapi: names the document.
	Dependency string `json:"dependency"`
	// Document is the document's absolute path or URL.
	Document string `json:"document"`
	// Version is the document's openapi: version (3.0.3, 3.1.0, ...).
	Version string `json:"version"`
	// Operations counts the document's operations.
	Operations int `json:"operations"`
	// Tools counts the operations that became a tool (imported or not).
	Tools int `json:"tools"`
	// Imported counts the tools the dependency's import selects.
	Imported int `json:"imported"`
	// Skipped lists the operations that could not become a tool, and why.
	Skipped []Skipped `json:"skipped,omitempty"`
	// Collisions lists tool names that two operations would have had; the
	// first in path order keeps it, the others are skipped.
	Collisions []Collision `json:"collisions,omitempty"`
}

// Skipped is an operation that did not become a tool.
type Skipped struct {
	// Operation is its operationId, or METHOD /path without one.
	Operation string `json:"operation"`
	// Why says what toolgate cannot do with it.
	Why string `json:"why"`
}

// Collision is one tool name that several operations map to.
type Collision struct {
	// Name is the tool name.
	Name string `json:"name"`
	// Operations are the operations (and the declared tool) that have it.
	Operations []string `json:"operations"`
	// Kept is the one that keeps the name.
	Kept string `json:"kept"`
}

// Write prints the report as toolgate check shows it: one summary line,
// then one line per skipped operation and per collision.
func (r *Report) Write(w io.Writer) {
	fmt.Fprintf(w, "  %s: openapi %s (OpenAPI %s): %d operations, %d imported, %d skipped, %d name collisions\n",
		r.Dependency, r.Document, r.Version, r.Operations, r.Imported, len(r.Skipped), len(r.Collisions))
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "    skipped %s: %s\n", s.Operation, s.Why)
	}
	for _, c := range r.Collisions {
		fmt.Fprintf(w, "    collision %s: %s; the name stays %s's\n", c.Name, strings.Join(c.Operations, ", "), c.Kept)
	}
}
