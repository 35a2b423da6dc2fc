package openapi

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// maxSchemaDepth bounds how deep a converted schema nests; deeper parts
// become {} (any value).
const maxSchemaDepth = 48

// converter turns OpenAPI schemas (3.0's dialect or 3.1's JSON Schema)
// into JSON Schema 2020-12 with every $ref inlined. A $ref back into a
// schema being converted (a recursive type) becomes {}: any value. A $ref
// converted once is reused (shared, never modified afterwards).
type converter struct {
	r     *reader
	stack map[string]bool
	cache map[string]map[string]any
	cuts  int
	// lenient leaves out required: for answers, which documents often
	// describe with fields the service leaves out.
	lenient bool
	// answers converts response schemas (lenient); nil in itself.
	answers *converter
}

func newConverter(r *reader) *converter {
	c := &converter{r: r, stack: map[string]bool{}, cache: map[string]map[string]any{}}
	c.answers = &converter{r: r, stack: map[string]bool{}, cache: map[string]map[string]any{}, lenient: true}
	return c
}

// schemaKeys are the JSON Schema keywords whose value is one schema.
var schemaKeys = map[string]bool{
	"additionalProperties": true, "not": true, "contains": true, "propertyNames": true,
	"if": true, "then": true, "else": true, "unevaluatedProperties": true,
	"unevaluatedItems": true, "additionalItems": true,
}

// schemaMapKeys hold a map of schemas; schemaListKeys a list of them.
var (
	schemaMapKeys  = map[string]bool{"properties": true, "patternProperties": true, "dependentSchemas": true}
	schemaListKeys = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true}
)

// keptKeys are copied as they are.
var keptKeys = map[string]bool{
	"type": true, "enum": true, "const": true, "format": true, "minimum": true, "maximum": true,
	"multipleOf": true, "minLength": true, "maxLength": true, "minItems": true, "maxItems": true,
	"uniqueItems": true, "minProperties": true, "maxProperties": true, "required": true,
	"default": true, "title": true, "description": true, "contentMediaType": true,
	"contentEncoding": true, "dependentRequired": true, "maxContains": true, "minContains": true,
}

// convert returns the JSON Schema of the OpenAPI schema v found in the
// document at base.
func (c *converter) convert(base string, v any) any { return c.schema(base, v, 0) }

func (c *converter) schema(base string, v any, depth int) any {
	switch v := v.(type) {
	case bool:
		return v
	case map[string]any:
		if depth > maxSchemaDepth {
			c.cuts++
			return map[string]any{}
		}
		if ref, ok := v["$ref"].(string); ok {
			return c.ref(base, ref, v, depth)
		}
		return c.object(base, v, depth)
	}
	return map[string]any{}
}

// ref inlines a $ref, with the siblings 3.1 allows beside it laid over.
func (c *converter) ref(base, ref string, v map[string]any, depth int) any {
	t, err := c.r.resolve(base, ref)
	if err != nil {
		return map[string]any{} // reported by check as the document's problem
	}
	var out map[string]any
	if cached, ok := c.cache[t.key]; ok {
		out = cached
	} else if c.stack[t.key] {
		c.cuts++
		out = map[string]any{}
	} else {
		c.stack[t.key] = true
		cuts := c.cuts
		s := c.schema(t.base, t.value, depth+1)
		delete(c.stack, t.key)
		m, ok := s.(map[string]any)
		if !ok {
			m = map[string]any{}
			if s == false {
				m["not"] = map[string]any{}
			}
		}
		out = m
		if c.cuts == cuts {
			c.cache[t.key] = m
		}
	}
	if len(v) == 1 {
		return out
	}
	siblings := maps.Clone(v)
	delete(siblings, "$ref")
	over, _ := c.object(base, siblings, depth).(map[string]any)
	if len(over) == 0 {
		return out
	}
	merged := maps.Clone(out)
	maps.Copy(merged, over)
	return merged
}

// object converts a schema object without a $ref.
func (c *converter) object(base string, v map[string]any, depth int) any {
	out := make(map[string]any, len(v))
	for k, x := range v {
		c.key(out, base, k, x, depth)
	}
	// OpenAPI 3.0: exclusiveMinimum: true beside minimum.
	for _, bound := range []string{"Minimum", "Maximum"} {
		if v["exclusive"+bound] == true {
			if n, ok := v[strings.ToLower(bound)]; ok {
				out["exclusive"+bound] = n
				delete(out, strings.ToLower(bound))
			}
		}
	}
	if v["nullable"] == true {
		nullable(out)
	}
	if r, ok := out["required"].([]any); ok && len(r) == 0 {
		delete(out, "required")
	}
	return out
}

// key converts the value x of the schema keyword k into out: a kept
// keyword when well formed, a nested schema (or map or list of them)
// converted, anything else left out.
func (c *converter) key(out map[string]any, base, k string, x any, depth int) {
	switch {
	case k == "required" && c.lenient:
	case keptKeys[k]:
		if y, ok := wellFormed(k, x); ok {
			out[k] = y
		}
	case k == "pattern":
		if s, ok := x.(string); ok {
			if _, err := regexp.Compile(s); err == nil {
				out[k] = s
			}
		}
	case k == "exclusiveMinimum" || k == "exclusiveMaximum":
		if _, ok := x.(json.Number); ok {
			out[k] = x
		}
	case k == "items":
		if list, ok := x.([]any); ok { // draft 4 tuple
			out["prefixItems"] = c.list(base, list, depth)
		} else {
			out[k] = c.schema(base, x, depth+1)
		}
	case schemaKeys[k]:
		out[k] = c.schema(base, x, depth+1)
	case schemaMapKeys[k]:
		if m, ok := x.(map[string]any); ok {
			props := make(map[string]any, len(m))
			for name, s := range m {
				props[name] = c.schema(base, s, depth+1)
			}
			out[k] = props
		}
	case schemaListKeys[k]:
		if list, ok := x.([]any); ok {
			out[k] = c.list(base, list, depth)
		}
	}
}

func (c *converter) list(base string, list []any, depth int) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = c.schema(base, s, depth+1)
	}
	return out
}

// jsonTypes are the types of JSON Schema.
var jsonTypes = map[string]bool{"null": true, "boolean": true, "object": true, "array": true, "number": true, "string": true, "integer": true}

// wellFormed returns a kept keyword's value when its form is what JSON
// Schema requires (a document's mistakes, such as Swagger's type: file or
// required: true on a property, would otherwise keep the tool's schema
// from compiling), and false to leave the keyword out.
func wellFormed(k string, v any) (any, bool) {
	switch k {
	case "type":
		switch t := v.(type) {
		case string:
			if t == "file" {
				return "string", true
			}
			return t, jsonTypes[t]
		case []any:
			for _, x := range t {
				if s, ok := x.(string); !ok || !jsonTypes[s] {
					return nil, false
				}
			}
			return t, len(t) > 0
		}
		return nil, false
	case "required":
		list, ok := v.([]any)
		if !ok {
			return nil, false
		}
		for _, x := range list {
			if _, ok := x.(string); !ok {
				return nil, false
			}
		}
		return list, true
	case "enum":
		list, ok := v.([]any)
		return list, ok && len(list) > 0
	case "minimum", "maximum", "multipleOf":
		_, ok := v.(json.Number)
		return v, ok
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains":
		n, ok := v.(json.Number)
		if !ok {
			return nil, false
		}
		i, err := n.Int64()
		return v, err == nil && i >= 0
	case "uniqueItems":
		_, ok := v.(bool)
		return v, ok
	case "format", "title", "description", "contentMediaType", "contentEncoding":
		_, ok := v.(string)
		return v, ok
	case "dependentRequired":
		_, ok := v.(map[string]any)
		return v, ok
	}
	return v, true
}

// nullable lets a 3.0 schema marked nullable take null too.
func nullable(s map[string]any) {
	switch t := s["type"].(type) {
	case string:
		s["type"] = []any{t, "null"}
	case []any:
		if !slices.Contains(t, any("null")) {
			s["type"] = append(slices.Clone(t), "null")
		}
	}
	if e, ok := s["enum"].([]any); ok && !slices.Contains(e, nil) {
		s["enum"] = append(slices.Clone(e), nil)
	}
}

// isObjectSchema reports whether s describes a JSON object with declared
// properties and nothing that composes it from others.
func isObjectSchema(s map[string]any) bool {
	if _, ok := s["properties"].(map[string]any); !ok {
		return false
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "not", "if"} {
		if _, ok := s[k]; ok {
			return false
		}
	}
	switch t := s["type"].(type) {
	case nil:
		return true
	case string:
		return t == "object"
	}
	return false
}
