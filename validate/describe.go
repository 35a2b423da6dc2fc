package validate

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/types"
)

// describeFinding turns one schema violation into a refusal.
func (c *Compiled) describeFinding(args map[string]any, f finding) *Refusal {
	field := fieldPath(args, f.loc)
	subject, is, has, noun, nouns := "Argument "+field, "is", "has", "field", "fields"
	if field == "" {
		field, subject, is, has, noun, nouns = "args", "The arguments", "are", "have", "argument", "arguments"
	}
	val := valueAt(args, f.loc)
	r := &Refusal{Rule: -1, Field: field}

	switch f.class {
	case classMissing:
		r.Code = types.CodeMissingArguments
		var missing []string
		var cond string
		switch k := f.err.ErrorKind.(type) {
		case *kind.Required:
			missing = k.Missing
		case *kind.Dependency:
			missing, cond = k.Missing, fmt.Sprintf(" that %s with %s", plural(len(k.Missing), "goes", "go"), k.Prop)
		case *kind.DependentRequired:
			missing, cond = k.Missing, fmt.Sprintf(" that %s with %s", plural(len(k.Missing), "goes", "go"), k.Prop)
		}
		r.Message = fmt.Sprintf("%s of %s %s missing the required %s %s%s. Add %s and call again.",
			subject, c.Name, is, plural(len(missing), noun, nouns), nameList(missing), cond, plural(len(missing), "it", "them"))
	case classUnknown:
		r.Code = types.CodeUnknownArguments
		if k, ok := f.err.ErrorKind.(*kind.AdditionalProperties); ok {
			r.Message = fmt.Sprintf("%s of %s %s unknown %s %s. Remove %s (check the spelling) and call again.",
				subject, c.Name, has, plural(len(k.Properties), noun, nouns), nameList(k.Properties), plural(len(k.Properties), "it", "them"))
		} else {
			r.Message = fmt.Sprintf("%s of %s %s not allowed here. Remove it and call again.", subject, c.Name, is)
		}
	case classType:
		r.Code = types.CodeWrongType
		got := jsonType(val)
		r.Message = fmt.Sprintf("%s of %s must be %s, got %s %s%s.%s %s",
			subject, c.Name, typeList(f.wants), got, brief(val), c.propertyHint(f.loc), typeHint(f.wants, val), fixAndRetry)
	default:
		r.Code = types.CodeInvalidArgument
		r.Message = fmt.Sprintf("%s of %s %s invalid: %s%s. %s",
			subject, c.Name, is, constraintText(f.err.ErrorKind, val), c.propertyHint(f.loc), fixAndRetry)
	}
	return r
}

// typeHint suggests the fix for the commonest type mistakes: a number sent
// as a string, or the reverse.
func typeHint(wants []string, val any) string {
	wantsNumber, wantsString := false, false
	for _, w := range wants {
		wantsNumber = wantsNumber || w == "integer" || w == "number"
		wantsString = wantsString || w == "string"
	}
	switch v := val.(type) {
	case string:
		if wantsNumber && validNumberText(v) {
			return fmt.Sprintf(" Send it as a JSON number without quotes: %s.", strings.TrimSpace(v))
		}
		if v == "true" || v == "false" {
			for _, w := range wants {
				if w == "boolean" {
					return fmt.Sprintf(" Send it as a JSON boolean without quotes: %s.", v)
				}
			}
		}
	case json.Number:
		if wantsString {
			return fmt.Sprintf(" Send it as a JSON string in quotes: %q.", string(v))
		}
		for _, w := range wants {
			if w == "integer" {
				return " It must be a whole number."
			}
		}
	}
	return ""
}

func validNumberText(s string) bool {
	return jsontext.ValidNumber(strings.TrimSpace(s))
}

// propertyHint quotes the schema's description of a top-level argument,
// which often says what a valid value looks like.
func (c *Compiled) propertyHint(loc []string) string {
	if len(loc) != 1 {
		return ""
	}
	p := c.args.schema.Properties[loc[0]]
	if p == nil || p.Description == "" {
		return ""
	}
	d := strings.TrimSpace(p.Description)
	if utf8.RuneCountInString(d) > 200 {
		d = string([]rune(d)[:200]) + "…"
	}
	return fmt.Sprintf(" (%s: %s)", loc[0], strings.TrimSuffix(d, "."))
}

// constraintText says which constraint a value broke and how.
func constraintText(k jsonschema.ErrorKind, val any) string {
	v := brief(val)
	switch k := k.(type) {
	case *kind.Pattern:
		return fmt.Sprintf("%s does not match the pattern %s", v, k.Want)
	case *kind.Minimum:
		return fmt.Sprintf("%s is below the minimum %s", v, ratString(k.Want))
	case *kind.Maximum:
		return fmt.Sprintf("%s is above the maximum %s", v, ratString(k.Want))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("%s must be greater than %s (exclusiveMinimum)", v, ratString(k.Want))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("%s must be less than %s (exclusiveMaximum)", v, ratString(k.Want))
	case *kind.MultipleOf:
		return fmt.Sprintf("%s is not a multiple of %s (multipleOf)", v, ratString(k.Want))
	case *kind.MinLength:
		return fmt.Sprintf("%s is %d %s long, shorter than the minimum length %d",
			v, k.Got, plural(k.Got, "character", "characters"), k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("%s is %d characters long, longer than the maximum length %d", v, k.Got, k.Want)
	case *kind.Enum:
		allowed := make([]string, len(k.Want))
		for i, w := range k.Want {
			allowed[i] = brief(w)
		}
		return fmt.Sprintf("%s is not one of the allowed values (enum): %s", v, nameList(allowed))
	case *kind.Const:
		return fmt.Sprintf("%s must be exactly %s (const)", v, brief(k.Want))
	case *kind.Format:
		return fmt.Sprintf("%s is not a valid %s (format)", v, k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("it has %d %s, fewer than the minimum %d (minItems)", k.Got, plural(k.Got, "item", "items"), k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("it has %d items, more than the maximum %d (maxItems)", k.Got, k.Want)
	case *kind.UniqueItems:
		return fmt.Sprintf("items %d and %d are equal; the items must be unique (uniqueItems)", k.Duplicates[0], k.Duplicates[1])
	case *kind.MinProperties:
		return fmt.Sprintf("it has %d %s, fewer than the minimum %d (minProperties)", k.Got, plural(k.Got, "field", "fields"), k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("it has %d fields, more than the maximum %d (maxProperties)", k.Got, k.Want)
	case *kind.PropertyNames:
		return fmt.Sprintf("the field name %q is not allowed (propertyNames)", k.Property)
	case *kind.AnyOf:
		return fmt.Sprintf("%s matches none of the allowed forms (anyOf)", v)
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return fmt.Sprintf("%s matches more than one of the allowed forms (oneOf, forms %d and %d)", v, k.Subschemas[0], k.Subschemas[1])
		}
		return fmt.Sprintf("%s matches none of the allowed forms (oneOf)", v)
	case *kind.Not:
		return fmt.Sprintf("%s is a value that is not allowed (not)", v)
	}
	return fmt.Sprintf("%s: %s", v, k.LocalizedString(printer))
}
