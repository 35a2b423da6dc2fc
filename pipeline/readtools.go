package pipeline

import (
	"slices"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// readToolsLike names the read tools a model can check a write's unknown
// outcome with when the write has no verify read: read tools on the same
// dependency that the principal may call and whose required arguments are
// all arguments of the write (and at least one), sorted by name.
func readToolsLike(tools *config.Config, write *config.Tool, who *types.Principal) []string {
	if tools == nil || write == nil {
		return nil
	}
	accepts := schemaProperties(write.InputSchema)
	var names []string
	for name, t := range tools.Tools {
		if t == nil || t == write || t.Effect != types.EffectRead || t.Dependency != write.Dependency {
			continue
		}
		if who != nil && !who.Can(t.Permission) {
			continue
		}
		required := schemaRequired(t.InputSchema)
		if len(required) == 0 || !allIn(required, accepts) {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// schemaProperties returns the property names of a JSON Schema object.
func schemaProperties(schema map[string]any) map[string]bool {
	props, _ := schema["properties"].(map[string]any)
	out := make(map[string]bool, len(props))
	for name := range props {
		out[name] = true
	}
	return out
}

// schemaRequired returns the required property names of a JSON Schema
// object.
func schemaRequired(schema map[string]any) []string {
	var out []string
	switch req := schema["required"].(type) {
	case []any:
		for _, r := range req {
			if s, ok := r.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = append(out, req...)
	}
	return out
}

func allIn(names []string, set map[string]bool) bool {
	for _, n := range names {
		if !set[n] {
			return false
		}
	}
	return true
}
