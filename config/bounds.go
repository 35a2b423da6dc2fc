package config

import (
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds on what a source (an MCP server, an OpenAPI document) may give a
// tool. A source is often a third party's: its schemas and descriptions
// are hostile input exactly as the model's arguments are.
const (
	// MaxDescriptionBytes bounds an imported tool's description; a longer
	// one is cut with DescriptionCut at the end (model APIs cap it near
	// 1024 bytes).
	MaxDescriptionBytes = 1000
	// MaxSchemaBytes bounds one imported schema, encoded as JSON.
	MaxSchemaBytes = 1 << 20
	// MaxSchemaNodes bounds the schema objects, arrays and values of one
	// imported schema counted as if every local $ref were expanded in
	// place, so that a small schema of doubling references (a "$ref
	// bomb") is refused before anything walks it.
	MaxSchemaNodes = 200_000
	// MaxSchemaDepth bounds how deep one imported schema nests, through
	// its $refs (a $ref back into itself, a recursive type, is allowed).
	MaxSchemaDepth = 64
)

// DescriptionCut ends a description cut at MaxDescriptionBytes.
const DescriptionCut = "…"

// CutDescription returns s, or its first bytes with DescriptionCut at the
// end when s is longer than MaxDescriptionBytes (never splitting a UTF-8
// sequence).
func CutDescription(s string) string {
	if len(s) <= MaxDescriptionBytes {
		return s
	}
	cut := MaxDescriptionBytes - len(DescriptionCut)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + DescriptionCut
}

// CheckSchemaBounds reports an imported schema that is too big to take:
// over MaxSchemaBytes (encodedBytes, when the caller knows it; 0 skips the
// check), over MaxSchemaNodes or MaxSchemaDepth counted as if every local
// $ref ("#/...") were expanded, or with a $ref to another document. It
// never expands anything: each object is counted once and its count
// reused, so a bomb costs as much as its text.
func CheckSchemaBounds(schema map[string]any, encodedBytes int) error {
	if encodedBytes > MaxSchemaBytes {
		return fmt.Errorf("the schema is %d bytes, over the limit of %d", encodedBytes, MaxSchemaBytes)
	}
	c := &schemaCounter{root: schema, memo: map[uintptr]schemaCount{}, open: map[uintptr]bool{}}
	n, err := c.count(schema)
	if err != nil {
		return err
	}
	if n.nodes > MaxSchemaNodes {
		return fmt.Errorf("the schema expands (its $refs followed) to more than %d parts", MaxSchemaNodes)
	}
	if n.depth > MaxSchemaDepth {
		return fmt.Errorf("the schema nests (its $refs followed) deeper than %d levels", MaxSchemaDepth)
	}
	return nil
}

// schemaCount is what a value expands to: how many parts and how deep.
type schemaCount struct{ nodes, depth int }

type schemaCounter struct {
	root any
	memo map[uintptr]schemaCount
	open map[uintptr]bool // being counted: a $ref to one is a recursion
}

// count counts v as if expanded; counts saturate just past the bounds.
func (c *schemaCounter) count(v any) (schemaCount, error) {
	switch x := v.(type) {
	case map[string]any:
		id := reflect.ValueOf(x).Pointer()
		if n, ok := c.memo[id]; ok {
			return n, nil
		}
		if c.open[id] {
			return schemaCount{1, 1}, nil // a recursive type: bounded by the data
		}
		c.open[id] = true
		defer delete(c.open, id)
		sum := schemaCount{1, 1}
		for k, y := range x {
			if ref, ok := y.(string); ok && k == "$ref" {
				t, err := c.ref(ref)
				if err != nil {
					return sum, err
				}
				y = t
			}
			n, err := c.count(y)
			if err != nil {
				return sum, err
			}
			sum = sum.add(n)
		}
		c.memo[id] = sum
		return sum, nil
	case []any:
		sum := schemaCount{1, 1}
		for _, y := range x {
			n, err := c.count(y)
			if err != nil {
				return sum, err
			}
			sum = sum.add(n)
		}
		return sum, nil
	}
	return schemaCount{1, 1}, nil
}

// add adds a child's count to its parent's.
func (s schemaCount) add(child schemaCount) schemaCount {
	s.nodes = min(s.nodes+child.nodes, MaxSchemaNodes+1)
	s.depth = max(s.depth, min(child.depth+1, MaxSchemaDepth+1))
	return s
}

// ref is the value a $ref names: a JSON pointer into the schema itself.
// An anchor ("#name") counts as one part; another document is refused.
func (c *schemaCounter) ref(ref string) (any, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("$ref %q names another document; only $refs inside the schema (#/$defs/...) are taken", limitText(ref, 80))
	}
	if frag == "" {
		return c.root, nil
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, nil // an anchor
	}
	if p, err := url.PathUnescape(frag); err == nil {
		frag = p
	}
	v := c.root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, nil
			}
			v = x[i]
		default:
			return nil, nil // a dangling $ref: the validator reports it
		}
	}
	return v, nil
}

// limitText is s, at most n bytes (and valid UTF-8 where s was).
func limitText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
