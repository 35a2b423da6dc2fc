package docgen

import (
	"errors"
	"fmt"
	"strings"
)

// The markers around the generated key reference in docs/config.md.
const (
	BeginKeys = "<!-- BEGIN GENERATED KEYS: go generate ./config; edit the doc comments in config/, not this table -->"
	EndKeys   = "<!-- END GENERATED KEYS -->"
)

// RenderKeys is the key reference: one table row per key.
func RenderKeys(keys []Key) string {
	var b strings.Builder
	b.WriteString("| key | type | default | what it does |\n|---|---|---|---|\n")
	for _, k := range keys {
		def := k.Default
		if def == "" {
			def = "-"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Path, k.Type, cell(def), cell(k.Doc))
	}
	return b.String()
}

// cell keeps a table cell on one row.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// Splice replaces what lies between the markers of doc with generated.
func Splice(doc, generated string) (string, error) {
	i := strings.Index(doc, BeginKeys)
	j := strings.Index(doc, EndKeys)
	if i < 0 || j < i {
		return "", errors.New("docgen: docs/config.md lacks the generated-keys markers " + BeginKeys + " ... " + EndKeys)
	}
	return doc[:i+len(BeginKeys)] + "\n\n" + generated + "\n" + doc[j:], nil
}
