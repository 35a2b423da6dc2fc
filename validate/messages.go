package validate

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/jsontext"
)

// Sentences that end refusals: what the model should do next.
const (
	fixAndRetry   = "Fix the arguments and call again."
	doNotRetry    = "Do not retry; escalate to a person."
	maxBriefBytes = 60
	maxListed     = 40
)

// brief shows a value compactly for a message: JSON, cut to a few dozen
// bytes.
func brief(v any) string {
	s := string(jsontext.Canonical(v))
	if len(s) <= maxBriefBytes {
		return s
	}
	cut := maxBriefBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// shortName cuts a model-supplied name (a tool or argument name) for a
// message, so a pathological name cannot flood it.
func shortName(s string) string {
	if len(s) <= maxBriefBytes {
		return s
	}
	cut := maxBriefBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// shortNames applies shortName to each name.
func shortNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = shortName(n)
	}
	return out
}

// jsonType names the JSON type of a decoded value; numbers without a
// fraction or exponent are "integer".
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if strings.ContainsAny(string(v), ".eE") {
			return "number"
		}
		return "integer"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "value"
}

// withArticle puts "a" or "an" before a JSON type word ("null" has none).
func withArticle(t string) string {
	switch t {
	case "null":
		return "null"
	case "integer", "object", "array":
		return "an " + t
	}
	return "a " + t
}

// typeList joins wanted types: "a string or null".
func typeList(types []string) string {
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = withArticle(t)
	}
	return strings.Join(parts, " or ")
}

// nameList joins names for a message, capping very long lists.
func nameList(names []string) string {
	if len(names) > maxListed {
		return strings.Join(names[:maxListed], ", ") + ", … (" + strconv.Itoa(len(names)-maxListed) + " more)"
	}
	return strings.Join(names, ", ")
}

// orNone is nameList, or "none" for an empty list.
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return nameList(names)
}

// plural picks the singular or plural form by count.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ratString writes a schema bound exactly: 1, 0.5, 1/3 as 0.3333333333.
func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	s := r.FloatString(10)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// fieldPath renders an instance location for a message: order_id,
// address.city, items[0].sku. Array indices are told apart from object keys
// by walking the value.
func fieldPath(root any, loc []string) string {
	var b strings.Builder
	cur := root
	for _, tok := range loc {
		switch c := cur.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
			if m, ok := c.(map[string]any); ok {
				cur = m[tok]
			} else {
				cur = nil
			}
		}
	}
	return b.String()
}

// valueAt returns the value at an instance location.
func valueAt(root any, loc []string) any {
	cur := root
	for _, tok := range loc {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}
