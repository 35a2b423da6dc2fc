package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// printer renders jsonschema's own messages where toolgate has no better
// wording.
var printer = message.NewPrinter(language.English)

// argSchema is what Check needs to know about a tool's arguments, taken
// from the top level of its compiled input schema.
type argSchema struct {
	schema *jsonschema.Schema
	// fast proves common arguments valid without schema; nil when the
	// schema is not flat.
	fast *fastSchema
	// required lists the required arguments in schema order.
	required []string
	// props are the declared properties, sorted.
	props []string
	// patterns are patternProperties: a key matching one is not an extra.
	patterns []jsonschema.Regexp
	// openExtras is true when additionalProperties is explicitly true or a
	// schema: then keys outside props are allowed.
	openExtras bool
	// integers are the top-level arguments whose only numeric type is
	// integer: Check rewrites 425000.0 or 4.25e5 to 425000 for them.
	integers []string
	// summary lists the arguments for messages:
	// "order_id (string, required), reason (string)".
	summary string
}

// refuseLoader keeps schemas self-contained: no file or network $ref.
type refuseLoader struct{}

// Load implements jsonschema.URLLoader.
func (refuseLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("$ref to %s: external references are not allowed; put the schema inline (use $defs)", u)
}

// compileSchema compiles a tool's input schema (JSON Schema 2020-12, with
// format assertions on). A nil schema means the tool takes no arguments.
// sc shares the compiled schema with the tools that have the same one.
func compileSchema(sc *schemaCache, tool string, raw map[string]any) (*argSchema, []*Problem) {
	if raw == nil {
		raw = map[string]any{"type": "object"}
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, []*Problem{{tool, "input_schema", "cannot be written as JSON: " + err.Error()}}
	}
	sch, err := sc.compile(tool, "input_schema", b)
	var re *readError
	if errors.As(err, &re) {
		return nil, []*Problem{{tool, "input_schema", "cannot be read as JSON: " + err.Error()}}
	}
	if err != nil {
		return nil, []*Problem{{tool, "input_schema", schemaErrorText(err)}}
	}
	as := &argSchema{schema: sch, required: sch.Required, fast: compileFast(sch)}
	var problems []*Problem
	if sch.Types != nil && !sch.Types.IsEmpty() && !slices.Contains(sch.Types.ToStrings(), "object") {
		problems = append(problems, &Problem{tool, "input_schema.type",
			fmt.Sprintf("is %s; the arguments are always a JSON object, so use type: object", strings.Join(sch.Types.ToStrings(), " or "))})
	}
	for name, p := range sch.Properties {
		as.props = append(as.props, name)
		if p != nil && p.Types != nil {
			ts := p.Types.ToStrings()
			if slices.Contains(ts, "integer") && !slices.Contains(ts, "number") {
				as.integers = append(as.integers, name)
			}
		}
	}
	slices.Sort(as.props)
	slices.Sort(as.integers)
	for re := range sch.PatternProperties {
		as.patterns = append(as.patterns, re)
	}
	switch ap := sch.AdditionalProperties.(type) {
	case bool:
		as.openExtras = ap
	case *jsonschema.Schema:
		as.openExtras = true
	}
	for _, r := range as.required {
		if !as.declares(r) {
			problems = append(problems, &Problem{tool, "input_schema.required",
				fmt.Sprintf("%q is required but is not among the properties (%s); add it to properties or fix the name", r, orNone(as.props))})
		}
	}
	as.summary = as.describeArgs()
	return as, problems
}

// declares reports whether name may appear in the arguments.
func (as *argSchema) declares(name string) bool {
	if _, ok := as.schema.Properties[name]; ok {
		return true
	}
	for _, re := range as.patterns {
		if re.MatchString(name) {
			return true
		}
	}
	return as.openExtras
}

// isRequired reports whether name is a required argument.
func (as *argSchema) isRequired(name string) bool { return slices.Contains(as.required, name) }

// typeOf returns the declared JSON type(s) of a top-level argument, "" when
// it has none.
func (as *argSchema) typeOf(name string) string {
	p := as.schema.Properties[name]
	if p == nil || p.Types == nil || p.Types.IsEmpty() {
		return ""
	}
	return strings.Join(p.Types.ToStrings(), " or ")
}

// describeArgs lists the arguments, required ones first.
func (as *argSchema) describeArgs() string {
	names := slices.Clone(as.required)
	for _, p := range as.props {
		if !slices.Contains(names, p) {
			names = append(names, p)
		}
	}
	parts := make([]string, 0, len(names))
	for _, n := range names {
		var notes []string
		if t := as.typeOf(n); t != "" {
			notes = append(notes, t)
		}
		if as.isRequired(n) {
			notes = append(notes, "required")
		}
		if len(notes) > 0 {
			parts = append(parts, n+" ("+strings.Join(notes, ", ")+")")
		} else {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, ", ")
}

// schemaErrorText renders a schema compile error on one line.
func schemaErrorText(err error) string {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			var parts []string
			for _, leaf := range leaves(ve) {
				at := "/" + strings.Join(leaf.InstanceLocation, "/")
				parts = append(parts, fmt.Sprintf("at %s: %s", at, leaf.ErrorKind.LocalizedString(printer)))
			}
			slices.Sort(parts)
			return "is not a valid JSON Schema: " + strings.Join(slices.Compact(parts), "; ")
		}
	}
	return "cannot be compiled: " + strings.Join(strings.Fields(err.Error()), " ")
}

// leaves returns the innermost errors of a validation error tree.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// Classes of schema findings, in the order Check reports them.
const (
	classMissing = iota
	classUnknown
	classType
	classConstraint
)

// finding is one schema violation worth reporting.
type finding struct {
	class int
	loc   []string
	err   *jsonschema.ValidationError
	// wants is set for type findings: the JSON types allowed.
	wants []string
}

// findings flattens a validation error into the violations a model can act
// on. allOf, $ref and groups are looked through; anyOf and oneOf are
// reported as a whole, as a type error when every alternative failed only
// on type.
func findings(e *jsonschema.ValidationError, out []finding) []finding {
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.AllOf, *kind.Reference:
		if len(e.Causes) == 0 {
			return append(out, finding{class: classConstraint, loc: e.InstanceLocation, err: e})
		}
		for _, c := range e.Causes {
			out = findings(c, out)
		}
		return out
	case *kind.Required, *kind.Dependency, *kind.DependentRequired:
		return append(out, finding{class: classMissing, loc: e.InstanceLocation, err: e})
	case *kind.AdditionalProperties, *kind.FalseSchema:
		return append(out, finding{class: classUnknown, loc: e.InstanceLocation, err: e})
	case *kind.Type:
		return append(out, finding{class: classType, loc: e.InstanceLocation, err: e, wants: k.Want})
	case *kind.AnyOf, *kind.OneOf:
		if wants, ok := onlyTypeFailures(e); ok && len(e.Causes) > 0 {
			return append(out, finding{class: classType, loc: e.InstanceLocation, err: e, wants: wants})
		}
	}
	return append(out, finding{class: classConstraint, loc: e.InstanceLocation, err: e})
}

// onlyTypeFailures reports whether every leaf under e is a type error at
// e's own location, and collects the wanted types.
func onlyTypeFailures(e *jsonschema.ValidationError) ([]string, bool) {
	var wants []string
	for _, leaf := range leaves(e) {
		t, ok := leaf.ErrorKind.(*kind.Type)
		if !ok || !slices.Equal(leaf.InstanceLocation, e.InstanceLocation) {
			return nil, false
		}
		for _, w := range t.Want {
			if !slices.Contains(wants, w) {
				wants = append(wants, w)
			}
		}
	}
	return wants, true
}

// firstFinding picks the violation to report: the earliest class, then the
// first location in lexical order, so the answer does not depend on map
// iteration order.
func firstFinding(fs []finding) finding {
	return slices.MinFunc(fs, func(a, b finding) int {
		if a.class != b.class {
			return a.class - b.class
		}
		if c := slices.Compare(a.loc, b.loc); c != 0 {
			return c
		}
		return strings.Compare(a.err.ErrorKind.LocalizedString(printer), b.err.ErrorKind.LocalizedString(printer))
	})
}
