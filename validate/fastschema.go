package validate

import (
	"encoding/json"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fastSchema proves the arguments of a flat schema valid without the
// jsonschema validator, which costs a dozen allocations and big-number
// arithmetic per number on every call. It only ever answers "valid": when
// it cannot prove that (a constraint fails, a number is not a plain
// integer, a keyword it does not know), the full validator decides and
// words the refusal. TestFastSchemaAgrees and FuzzFastSchema hold it to
// the validator.
//
// A flat schema is the common shape of a tool's input: an object whose
// properties are strings (minLength, maxLength, pattern, a string enum),
// numbers and integers (minimum, maximum and their exclusive forms),
// booleans or null, with required and additionalProperties false. Any
// other keyword, anywhere, and the tool has no fast path.
type fastSchema struct {
	props      map[string]*fastProp
	required   []string
	openExtras bool
}

// fastProp is one property's checks.
type fastProp struct {
	types                []string // JSON types allowed; empty: any of fast's kinds
	minLen, maxLen       int      // -1 when unset
	pattern              jsonschema.Regexp
	enum                 []string // nil when unset
	min, max, xmin, xmax *int64   // integer bounds; nil when unset
}

// The Schema fields each level may set; any other set field (seen through
// reflection, so that a field a later jsonschema release adds counts too)
// means no fast path.
var (
	annotationFields = []string{"DraftVersion", "Location", "ID", "Title", "Description", "Default", "Comment",
		"ReadOnly", "WriteOnly", "Examples", "Deprecated"}
	objectFields = append([]string{"Types", "Properties", "Required", "AdditionalProperties"}, annotationFields...)
	propFields   = append([]string{"Types", "Enum", "MinLength", "MaxLength", "Pattern",
		"Minimum", "Maximum", "ExclusiveMinimum", "ExclusiveMaximum"}, annotationFields...)
)

// compileFast returns the fast path of sch, or nil when sch is not flat.
func compileFast(sch *jsonschema.Schema) *fastSchema {
	if sch == nil || sch.DraftVersion != 2020 || !onlyFields(sch, objectFields) || sch.Types == nil {
		return nil
	}
	if ts := sch.Types.ToStrings(); len(ts) != 1 || ts[0] != "object" {
		return nil
	}
	f := &fastSchema{props: make(map[string]*fastProp, len(sch.Properties)), required: sch.Required}
	switch extra := sch.AdditionalProperties.(type) {
	case nil:
		f.openExtras = true
	case bool:
		f.openExtras = extra
	default:
		return nil
	}
	for name, ps := range sch.Properties {
		p := compileFastProp(ps)
		if p == nil {
			return nil
		}
		f.props[name] = p
	}
	return f
}

func compileFastProp(s *jsonschema.Schema) *fastProp {
	if s == nil || s.DraftVersion != 2020 || !onlyFields(s, propFields) {
		return nil
	}
	p := &fastProp{minLen: -1, maxLen: -1, pattern: s.Pattern}
	if s.Types != nil {
		p.types = s.Types.ToStrings()
		for _, t := range p.types {
			switch t {
			case "string", "number", "integer", "boolean", "null":
			default:
				return nil
			}
		}
	}
	if s.MinLength != nil {
		p.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		p.maxLen = *s.MaxLength
	}
	if s.Enum != nil {
		p.enum = make([]string, 0, len(s.Enum.Values))
		for _, v := range s.Enum.Values {
			str, ok := v.(string)
			if !ok {
				return nil
			}
			p.enum = append(p.enum, str)
		}
	}
	var ok bool
	if p.min, ok = intBound(s.Minimum); !ok {
		return nil
	}
	if p.max, ok = intBound(s.Maximum); !ok {
		return nil
	}
	if p.xmin, ok = intBound(s.ExclusiveMinimum); !ok {
		return nil
	}
	if p.xmax, ok = intBound(s.ExclusiveMaximum); !ok {
		return nil
	}
	return p
}

// intBound turns a bound into an int64; false when it is not an integer
// in int64's range.
func intBound(r *big.Rat) (*int64, bool) {
	if r == nil {
		return nil, true
	}
	if !r.IsInt() || !r.Num().IsInt64() {
		return nil, false
	}
	n := r.Num().Int64()
	return &n, true
}

// onlyFields reports whether every exported field of s outside allowed is
// its zero value.
func onlyFields(s *jsonschema.Schema, allowed []string) bool {
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || v.Field(i).IsZero() {
			continue
		}
		if !contains(allowed, f.Name) {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// valid reports whether it can prove args valid.
func (f *fastSchema) valid(args map[string]any) bool {
	for _, name := range f.required {
		if _, ok := args[name]; !ok {
			return false
		}
	}
	for name, v := range args {
		p, ok := f.props[name]
		if !ok {
			if !f.openExtras {
				return false
			}
			continue
		}
		if !p.valid(v) {
			return false
		}
	}
	return true
}

func (p *fastProp) valid(v any) bool {
	switch v := v.(type) {
	case string:
		if !p.allows("string") {
			return false
		}
		if p.minLen >= 0 || p.maxLen >= 0 {
			n := utf8.RuneCountInString(v)
			if (p.minLen >= 0 && n < p.minLen) || (p.maxLen >= 0 && n > p.maxLen) {
				return false
			}
		}
		if p.pattern != nil && !p.pattern.MatchString(v) {
			return false
		}
		if p.enum != nil && !contains(p.enum, v) {
			return false
		}
		return true
	case json.Number:
		if p.enum != nil {
			return false
		}
		// Only a plain integer literal is judged here; 5.0, 5e3 and
		// anything outside int64 go to the validator.
		if strings.ContainsAny(string(v), ".eE") {
			return false
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil || !(p.allows("integer") || p.allows("number")) {
			return false
		}
		return (p.min == nil || n >= *p.min) && (p.max == nil || n <= *p.max) &&
			(p.xmin == nil || n > *p.xmin) && (p.xmax == nil || n < *p.xmax)
	case bool:
		return p.enum == nil && p.allows("boolean")
	case nil:
		return p.enum == nil && p.allows("null")
	case map[string]any, []any:
		// Only a property that names no type takes these here.
		return len(p.types) == 0 && p.enum == nil
	}
	// (String and number keywords apply to their own kind only.)
	return false
}

// allows reports whether the property takes values of JSON type t (any
// type when the schema names none).
func (p *fastProp) allows(t string) bool {
	return len(p.types) == 0 || contains(p.types, t)
}
