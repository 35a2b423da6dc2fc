package openapi

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxToolName is what model APIs accept as a function name.
const maxToolName = 64

// toolName is the tool name of an operation: its operationId with every
// character a model API refuses replaced by _ (repos/get is repos_get),
// or, without an operationId, the method and the path
// (GET /pets/{petId} is get_pets_petId). A name longer than 64 keeps its
// first 55 characters and a hash of the whole.
func toolName(operationID, method, path string) string {
	raw := operationID
	if raw == "" {
		raw = strings.ToLower(method) + "_" + path
	}
	var b strings.Builder
	underscore := false
	for _, r := range raw {
		ok := r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			if operationID == "" {
				// Derived names read better without runs of _ and braces.
				if !underscore && b.Len() > 0 {
					b.WriteByte('_')
					underscore = true
				}
				continue
			}
			b.WriteByte('_')
			continue
		}
		b.WriteRune(r)
		underscore = r == '_'
	}
	name := strings.TrimRight(b.String(), "_")
	if name == "" {
		name = strings.ToLower(method)
	}
	if len(name) > maxToolName {
		sum := sha256.Sum256([]byte(raw))
		name = name[:maxToolName-9] + "_" + hex.EncodeToString(sum[:4])
	}
	return name
}
