package export

import "strings"

// dialect2020 is the JSON Schema dialect MCP and the model APIs assume.
const dialect2020 = "https://json-schema.org/draft/2020-12/schema"

// normalized returns a copy of a tool's schema that validators of JSON
// Schema 2020-12 (Ajv 2020, the model APIs) accept: no "$schema" below the
// root (a subschema may not switch dialects there); an older draft's
// keywords rewritten ("definitions" to "$defs" with their $refs, a tuple
// "items" list to "prefixItems", "additionalItems" to "items"); and a root
// "$schema" kept only when it names 2020-12. nil stays nil.
func normalized(schema map[string]any) map[string]any {
	if schema == nil {
		return nil
	}
	out, _ := normalize(cloneMap(schema), true).(map[string]any)
	if d, ok := out["$schema"].(string); ok && strings.TrimSuffix(d, "#") != dialect2020 {
		delete(out, "$schema")
	}
	return out
}

// modelSchema is normalized without any "$schema": the model APIs (OpenAI
// chat, Responses, Anthropic) refuse or ignore it.
func modelSchema(schema map[string]any) map[string]any {
	out := normalized(schema)
	delete(out, "$schema")
	return out
}

// normalize rewrites v in place (it is a copy), walking every subschema.
func normalize(v any, root bool) any {
	switch v := v.(type) {
	case map[string]any:
		if !root {
			delete(v, "$schema")
		}
		if defs, ok := v["definitions"]; ok {
			if _, has := v["$defs"]; !has {
				v["$defs"] = defs
				delete(v, "definitions")
			}
		}
		if ref, ok := v["$ref"].(string); ok && strings.HasPrefix(ref, "#/definitions/") {
			v["$ref"] = "#/$defs/" + strings.TrimPrefix(ref, "#/definitions/")
		}
		if items, ok := v["items"].([]any); ok {
			v["prefixItems"] = items
			delete(v, "items")
			if extra, ok := v["additionalItems"]; ok {
				v["items"] = extra
				delete(v, "additionalItems")
			}
		}
		for k, e := range v {
			switch k {
			case "const", "enum", "default", "examples":
				// values, not schemas
			case "properties", "patternProperties", "$defs", "dependentSchemas":
				if m, ok := e.(map[string]any); ok { // names to schemas: a name may be "$schema"
					for name, sub := range m {
						m[name] = normalize(sub, false)
					}
				}
			default:
				v[k] = normalize(e, false)
			}
		}
	case []any:
		for i, e := range v {
			v[i] = normalize(e, false)
		}
	}
	return v
}
