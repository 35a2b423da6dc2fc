package expr

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// ForSchema returns an environment in which args has the shape of a tool's
// input schema (a JSON Schema object, as decoded with json.Number), so that
// CEL's checker refuses what can never work at run time: an argument the
// schema does not declare (args.amount when it declares only amount_paise),
// a comparison of a string argument with a number, a rule that yields an
// int. principal is typed too (id string, permissions list(string), limits
// and attrs maps); state and result stay dynamic.
//
// A property's type: integer is int, string is string, boolean is bool,
// array is a list, an object with properties and no additional ones a
// nested object of the same kind; anything else (number, which may hold an
// int or a double, several types, no type) stays dyn. A schema that allows
// properties it does not list (additionalProperties true or a schema,
// patternProperties) makes args a map of dyn: any key may be present.
func (e *Env) ForSchema(schema map[string]any) (*Env, error) {
	p := &schemaProvider{Registry: types.NewEmptyRegistry(), fields: map[string]map[string]*types.Type{}}
	argsType := p.declare("toolgate.Args", schema)
	env, err := newEnv(map[string]*cel.Type{
		"args":      argsType,
		"principal": p.principal(),
		"state":     cel.MapType(cel.StringType, cel.DynType),
		"run_id":    cel.StringType,
		"call_id":   cel.StringType,
		"tool":      cel.StringType,
	}, cel.CustomTypeProvider(p))
	if err != nil {
		return nil, err
	}
	env.args = slices.Sorted(maps.Keys(p.fields["toolgate.Args"]))
	if env.args == nil {
		env.args = []string{}
	}
	return env, nil
}

var undefinedField = regexp.MustCompile(`undefined field '([^']*)'`)

// argsHint adds to CEL's "undefined field 'amount'" the arguments the
// schema declares and the likely one, when the field is unknown to args.
func (e *Env) argsHint(msg string) string {
	if e.args == nil {
		return msg
	}
	return undefinedField.ReplaceAllStringFunc(msg, func(m string) string {
		name := undefinedField.FindStringSubmatch(m)[1]
		if slices.Contains(e.args, name) {
			return m
		}
		hint := m + " (the input schema declares " + listOrNone(e.args)
		if s := Suggest(name, e.args); s != "" {
			hint += "; did you mean " + s + "?"
		}
		return hint + ")"
	})
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "no arguments"
	}
	return strings.Join(names, ", ")
}

// CompileInt is Compile for expressions that must yield an integer (quota
// amounts): an expression the checker can prove is of another type is
// refused at compile time.
func (e *Env) CompileInt(src string) (*Program, error) {
	p, out, err := e.compile(src)
	if err != nil {
		return nil, err
	}
	if !out.IsExactType(cel.IntType) && !out.IsExactType(cel.UintType) && !out.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("expression yields %s, want an integer such as %q", out, "args.amount_paise")
	}
	return p, nil
}

// schemaProvider adds the object types made from a schema to CEL's own
// provider. Its field types carry no accessors, so the interpreter reads
// the fields of the map that args really is, by name.
type schemaProvider struct {
	*types.Registry
	fields map[string]map[string]*types.Type // object type name -> field -> type
}

// declare returns the CEL type of a schema value at name.
func (p *schemaProvider) declare(name string, schema map[string]any) *types.Type {
	switch schemaType(schema) {
	case "integer":
		return types.IntType
	case "string":
		return types.StringType
	case "boolean":
		return types.BoolType
	case "array":
		items, _ := schema["items"].(map[string]any)
		if items == nil {
			return types.NewListType(types.DynType)
		}
		return types.NewListType(p.declare(name+"_item", items))
	case "object":
		props, _ := schema["properties"].(map[string]any)
		if props == nil || openObject(schema) {
			return types.NewMapType(types.StringType, types.DynType)
		}
		fields := map[string]*types.Type{}
		for _, k := range slices.Sorted(maps.Keys(props)) {
			sub, _ := props[k].(map[string]any)
			fields[k] = p.declare(name+"_"+typeNamePart(k), sub)
		}
		p.fields[name] = fields
		return types.NewObjectType(name)
	}
	return types.DynType
}

// principal is the CEL type of the principal variable.
func (p *schemaProvider) principal() *types.Type {
	p.fields["toolgate.Principal"] = map[string]*types.Type{
		"id":          types.StringType,
		"permissions": types.NewListType(types.StringType),
		"limits":      types.NewMapType(types.StringType, types.DynType),
		"attrs":       types.NewMapType(types.StringType, types.DynType),
	}
	return types.NewObjectType("toolgate.Principal")
}

// schemaType is the schema's single JSON type, "" when it has none or
// several (null aside: a nullable string is still read as a string only
// when present, so it stays dyn).
func schemaType(schema map[string]any) string {
	switch t := schema["type"].(type) {
	case string:
		return t
	case []any:
		if len(t) == 1 {
			s, _ := t[0].(string)
			return s
		}
	}
	if _, ok := schema["properties"]; ok && schema["type"] == nil {
		return "object"
	}
	return ""
}

// openObject reports whether an object schema allows properties it does
// not list.
func openObject(schema map[string]any) bool {
	if _, ok := schema["patternProperties"]; ok {
		return true
	}
	switch ap := schema["additionalProperties"].(type) {
	case bool:
		return ap
	case map[string]any:
		return true
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "$ref", "unevaluatedProperties", "dependentSchemas", "if"} {
		if _, ok := schema[k]; ok {
			return true // properties may come from elsewhere: do not guess
		}
	}
	return false
}

func typeNamePart(k string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, k)
}

// FindStructType implements types.Provider.
func (p *schemaProvider) FindStructType(name string) (*types.Type, bool) {
	if _, ok := p.fields[name]; ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.Registry.FindStructType(name)
}

// FindStructFieldNames implements types.Provider.
func (p *schemaProvider) FindStructFieldNames(name string) ([]string, bool) {
	if f, ok := p.fields[name]; ok {
		return slices.Sorted(maps.Keys(f)), true
	}
	return p.Registry.FindStructFieldNames(name)
}

// FindStructFieldType implements types.Provider.
func (p *schemaProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if f, ok := p.fields[name]; ok {
		t, ok := f[field]
		if !ok {
			return nil, false
		}
		return &types.FieldType{Type: t}, true
	}
	return p.Registry.FindStructFieldType(name, field)
}

// NewValue implements types.Provider: the schema's objects cannot be built
// in an expression (args{...}).
func (p *schemaProvider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if _, ok := p.fields[name]; ok {
		return types.NewErr("%s cannot be constructed", name)
	}
	return p.Registry.NewValue(name, fields)
}
