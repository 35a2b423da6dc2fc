package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/types"
)

// strictFields refuses members whose names are not in valid, naming them
// all and the valid ones.
func strictFields(ms []member, what string, valid ...string) *apiError {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.name
	}
	return refuseUnknown("field", what, names, valid)
}

// refuseUnknown names every one of names that is not valid, or is nil.
func refuseUnknown(noun, where string, names, valid []string) *apiError {
	var unknown []string
	for _, n := range names {
		if !slices.Contains(valid, n) {
			unknown = append(unknown, fmt.Sprintf("%q", clip(n)))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	if len(unknown) > 1 {
		noun += "s"
	}
	return badRequest("unknown %s %s in %s; valid: %s", noun, strings.Join(unknown, ", "), where, strings.Join(valid, ", "))
}

// kindOf names the JSON kind of a raw value with its article.
func kindOf(raw json.RawMessage) string { return types.JSONKind(raw) }

func kindOfToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "an array"
		}
		return "an object"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a number"
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// stringField decodes a member that must be a JSON string.
func stringField(m member) (string, *apiError) {
	var s string
	if kindOf(m.value) != "a string" || json.Unmarshal(m.value, &s) != nil {
		return "", badRequest("%q must be a string, got %s", m.name, kindOf(m.value))
	}
	return s, nil
}

// countField decodes a member that must be a whole number from 0 up.
func countField(m member) (int64, *apiError) {
	var n int64
	if kindOf(m.value) != "a number" || json.Unmarshal(m.value, &n) != nil || n < 0 {
		return 0, badRequest("%q must be a whole number of 0 or more, got %s", m.name, clip(string(bytes.TrimSpace(m.value))))
	}
	return n, nil
}
