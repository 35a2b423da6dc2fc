package openapi

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// preload reads every document the root's $refs reach, transitively, so
// that resolving them later needs no I/O.
func (r *reader) preload(ctx context.Context, root string) error {
	queue := []string{root}
	seen := map[string]bool{root: true}
	for len(queue) > 0 {
		loc := queue[0]
		queue = queue[1:]
		doc, err := r.document(ctx, loc)
		if err != nil {
			return err
		}
		var walkErr error
		walkRefs(doc, func(ref string) {
			part, _, _ := strings.Cut(ref, "#")
			if part == "" || walkErr != nil {
				return
			}
			target, err := resolveLocation(loc, part)
			if err != nil {
				walkErr = fmt.Errorf("%s: $ref %q: %w", loc, ref, err)
				return
			}
			if err := r.allowed(target); err != nil {
				walkErr = fmt.Errorf("%s: $ref %q: %w", loc, ref, err)
				return
			}
			if !seen[target] {
				seen[target] = true
				queue = append(queue, target)
			}
		})
		if walkErr != nil {
			return walkErr
		}
	}
	return nil
}

// walkRefs calls fn with every $ref string under v.
func walkRefs(v any, fn func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "$ref" {
				fn(s)
				continue
			}
			walkRefs(x, fn)
		}
	case []any:
		for _, x := range v {
			walkRefs(x, fn)
		}
	}
}

// target is what a $ref names: the value, the document that holds it (the
// base of its own $refs) and a key that identifies it.
type target struct {
	value any
	base  string
	key   string
}

// resolve follows one $ref written in the document at base. The
// documents must have been preloaded.
func (r *reader) resolve(base, ref string) (target, error) {
	part, frag, _ := strings.Cut(ref, "#")
	loc, err := resolveLocation(base, part)
	if err != nil {
		return target{}, fmt.Errorf("$ref %q: %w", ref, err)
	}
	doc, ok := r.docs[loc]
	if !ok {
		return target{}, fmt.Errorf("$ref %q: document %s was not loaded", ref, loc)
	}
	v, err := pointer(doc, frag)
	if err != nil {
		return target{}, fmt.Errorf("$ref %q: %w", ref, err)
	}
	return target{value: v, base: loc, key: loc + "#" + frag}, nil
}

// deref follows the $refs of a non-schema object (a parameter, a request
// body, a response, a path item) to the object itself.
func (r *reader) deref(base string, v any) (map[string]any, string, error) {
	for range 32 {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, base, fmt.Errorf("expected an object, got %T", v)
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, base, nil
		}
		t, err := r.resolve(base, ref)
		if err != nil {
			return nil, base, err
		}
		v, base = t.value, t.base
	}
	return nil, base, fmt.Errorf("more than 32 $refs in a chain")
}

// pointer walks a JSON pointer (RFC 6901, as a URI fragment) from v.
func pointer(v any, frag string) (any, error) {
	if frag == "" {
		return v, nil
	}
	if p, err := url.PathUnescape(frag); err == nil {
		frag = p
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, fmt.Errorf("#%s is not a JSON pointer (anchors are not supported)", frag)
	}
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				return nil, fmt.Errorf("#%s: no %q", frag, tok)
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("#%s: no item %q", frag, tok)
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("#%s: %q is inside a %T", frag, tok, v)
		}
	}
	return v, nil
}
