package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// outputSchema is a tool's compiled output_schema.
type outputSchema struct {
	schema *jsonschema.Schema
}

// compileOutput compiles a tool's output_schema (JSON Schema 2020-12, the
// same dialect and rules as input_schema). A nil schema checks nothing;
// sc shares the compiled schema with the tools that have the same one.
func compileOutput(sc *schemaCache, tool string, raw map[string]any) (*outputSchema, []*Problem) {
	if raw == nil {
		return nil, nil
	}
	bad := func(text string) []*Problem { return []*Problem{{tool, "output_schema", text}} }
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, bad("cannot be written as JSON: " + err.Error())
	}
	sch, err := sc.compile(tool, "output_schema", b)
	var re *readError
	if errors.As(err, &re) {
		return nil, bad("cannot be read as JSON: " + err.Error())
	}
	if err != nil {
		return nil, bad(schemaErrorText(err))
	}
	return &outputSchema{schema: sch}, nil
}

// CheckOutput checks a tool's answer (the result's data) against its
// output_schema. It returns nil when the tool declares none or the answer
// conforms, else a one-line description of every violation, e.g.
// `at /refund_id: got number, want string`.
func (c *Compiled) CheckOutput(data json.RawMessage) error {
	if c.output == nil {
		return nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("the answer is not JSON: %v", err)
	}
	err = c.output.schema.Validate(v)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err
	}
	var parts []string
	for _, leaf := range leaves(ve) {
		parts = append(parts, fmt.Sprintf("at /%s: %s", strings.Join(leaf.InstanceLocation, "/"), leaf.ErrorKind.LocalizedString(printer)))
	}
	slices.Sort(parts)
	return fmt.Errorf("%s", strings.Join(slices.Compact(parts), "; "))
}
