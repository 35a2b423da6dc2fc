package export

import "slices"

// strictKeywords are the JSON Schema keywords OpenAI's strict mode accepts.
var strictKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "anyOf": true, "description": true,
	"title": true, "$defs": true, "$ref": true, "pattern": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"multipleOf": true, "minItems": true, "maxItems": true,
}

// strictCompatible reports whether schema meets OpenAI's strict mode: every
// object schema closed and requiring all of its properties, and no keyword
// strict mode rejects. A schema that does not is exported without "strict"
// (the model then follows it on a best-effort basis, and toolgate validates
// every call anyway).
func strictCompatible(schema map[string]any) bool {
	for k, v := range schema {
		if !strictKeywords[k] {
			return false
		}
		switch k {
		case "properties", "$defs":
			props, ok := v.(map[string]any)
			if !ok {
				return false
			}
			for _, p := range props {
				sub, ok := p.(map[string]any)
				if !ok || !strictCompatible(sub) {
					return false
				}
			}
		case "items":
			sub, ok := v.(map[string]any)
			if !ok || !strictCompatible(sub) {
				return false
			}
		case "anyOf":
			list, ok := v.([]any)
			if !ok {
				return false
			}
			for _, e := range list {
				sub, ok := e.(map[string]any)
				if !ok || !strictCompatible(sub) {
					return false
				}
			}
		}
	}
	if !isObjectSchema(schema) {
		return true
	}
	if closed, ok := schema["additionalProperties"].(bool); !ok || closed {
		return false
	}
	props, _ := schema["properties"].(map[string]any)
	required := stringList(schema["required"])
	for name := range props {
		if !slices.Contains(required, name) {
			return false
		}
	}
	return true
}

// isObjectSchema says the schema describes an object ("type": "object" or
// a type list holding it, or properties without a type).
func isObjectSchema(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	case nil:
		_, ok := s["properties"]
		return ok
	}
	return false
}

func stringList(v any) []string {
	switch v := v.(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
