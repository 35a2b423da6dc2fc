package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/types"
)

// The arguments of a call: one JSON object, complete, with no extras, of
// the schema's types and within its constraints (Compiled.checkArgs, the
// first of Check's steps after the tool's existence).

// Bounds on a number literal in arguments. Checking a huge exponent against
// a schema's minimum costs big-number arithmetic; no tool needs one.
const (
	maxNumberLength   = 100
	maxNumberExponent = 1000
)

// checkArgs decodes and checks the arguments: one JSON object, every
// required argument and no other, of the schema's types and within its
// constraints. Integers come back in their plain form (normalizeIntegers).
func (c *Compiled) checkArgs(raw json.RawMessage) (map[string]any, *Refusal) {
	args, r := decodeArgs(c, raw)
	if r != nil {
		return nil, r
	}
	if r := c.checkPresence(args); r != nil {
		return nil, r
	}
	if r := c.checkSchema(args); r != nil {
		return nil, r
	}
	normalizeIntegers(args, c.args.integers)
	return args, nil
}

// decodeArgs decodes the arguments, which must be one JSON object.
func decodeArgs(c *Compiled, raw json.RawMessage) (map[string]any, *Refusal) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return map[string]any{}, nil
	}
	args, err := jsontext.DecodeObject(trimmed)
	if err == nil {
		return args, nil
	}
	return nil, &Refusal{
		Code: types.CodeWrongType,
		Message: fmt.Sprintf("The arguments of %s must be a JSON object of named arguments such as {%s}; %s. %s",
			c.Name, exampleArgs(c), strings.TrimPrefix(err.Error(), "want a JSON object, "), fixAndRetry),
		Rule:  -1,
		Field: "args",
	}
}

// exampleArgs sketches the argument object for a message.
func exampleArgs(c *Compiled) string {
	names := c.Required
	if len(names) == 0 {
		names = c.Properties
	}
	if len(names) > 3 {
		names = names[:3]
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%q: …", n)
	}
	return strings.Join(parts, ", ")
}

// checkPresence checks completeness, then extras, from the top level of
// the schema.
func (c *Compiled) checkPresence(args map[string]any) *Refusal {
	var missing []string
	for _, name := range c.args.required {
		if _, ok := args[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		described := make([]string, len(missing))
		for i, m := range missing {
			described[i] = m
			if t := c.args.typeOf(m); t != "" {
				described[i] += " (" + t + ")"
			}
		}
		supplied := "You supplied no arguments."
		if len(args) > 0 {
			supplied = "You supplied: " + nameList(shortNames(sortedKeys(args))) + "."
		}
		return &Refusal{
			Code: types.CodeMissingArguments,
			Message: fmt.Sprintf("%s needs the required %s %s, which %s missing. %s Supply every required argument and call again.",
				c.Name, plural(len(missing), "argument", "arguments"), nameList(described),
				plural(len(missing), "is", "are"), supplied),
			Rule:  -1,
			Field: missing[0],
		}
	}

	var extras []string
	for name := range args {
		if !c.args.declares(name) {
			extras = append(extras, name)
		}
	}
	if len(extras) == 0 {
		return nil
	}
	slices.Sort(extras)
	described := make([]string, len(extras))
	for i, e := range extras {
		described[i] = shortName(e)
		if s := expr.Suggest(e, c.args.props); s != "" {
			described[i] += " (did you mean " + s + "?)"
		}
	}
	valid := fmt.Sprintf("Valid arguments: %s.", c.args.summary)
	if len(c.args.props) == 0 {
		valid = fmt.Sprintf("%s takes no arguments; call it with {}.", c.Name)
	}
	return &Refusal{
		Code: types.CodeUnknownArguments,
		Message: fmt.Sprintf("%s has no %s %s. %s Remove the unknown %s (check the spelling) and call again.",
			c.Name, plural(len(extras), "argument", "arguments"), nameList(described), valid,
			plural(len(extras), "one", "ones")),
		Rule:  -1,
		Field: extras[0],
	}
}

// checkSchema validates the arguments against the whole schema: types,
// then constraints (and any nested missing or unknown fields).
func (c *Compiled) checkSchema(args map[string]any) *Refusal {
	if hasOversizedNumber(args) {
		loc, lit, _ := oversizedNumber(args, nil)
		return &Refusal{
			Code: types.CodeInvalidArgument,
			Message: fmt.Sprintf("Argument %s of %s is the number %s, which is outside the range toolgate accepts (at most %d characters, exponent within ±%d). %s",
				fieldPath(args, loc), c.Name, brief(json.Number(lit)), maxNumberLength, maxNumberExponent, fixAndRetry),
			Rule:  -1,
			Field: fieldPath(args, loc),
		}
	}
	if c.args.fast != nil && c.args.fast.valid(args) {
		return nil
	}
	err := c.args.schema.Validate(any(args))
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &Refusal{
			Code:    types.CodeInvalidArgument,
			Message: fmt.Sprintf("The arguments of %s do not fit its schema: %v. %s", c.Name, err, fixAndRetry),
			Rule:    -1,
			Field:   "args",
		}
	}
	return c.describeFinding(args, firstFinding(findings(ve, nil)))
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// normalizeIntegers rewrites integer-valued literals such as 5.0 or 5e0 of
// the named arguments as plain integers.
func normalizeIntegers(args map[string]any, names []string) {
	for _, name := range names {
		n, ok := args[name].(json.Number)
		if !ok || !strings.ContainsAny(string(n), ".eE") {
			continue
		}
		if r, ok := new(big.Rat).SetString(string(n)); ok && r.IsInt() {
			args[name] = json.Number(r.Num().String())
		}
	}
}

// hasOversizedNumber reports whether any number literal in v is too long
// or has too large an exponent. It allocates nothing: it runs on every call.
func hasOversizedNumber(v any) bool {
	switch v := v.(type) {
	case json.Number:
		return numberTooBig(string(v))
	case []any:
		for _, e := range v {
			if hasOversizedNumber(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range v {
			if hasOversizedNumber(e) {
				return true
			}
		}
	}
	return false
}

// oversizedNumber finds the first oversized number literal in sorted key
// order, for the message.
func oversizedNumber(v any, loc []string) ([]string, string, bool) {
	switch v := v.(type) {
	case json.Number:
		if numberTooBig(string(v)) {
			return loc, string(v), true
		}
	case []any:
		for i, e := range v {
			if l, lit, ok := oversizedNumber(e, slices.Concat(loc, []string{strconv.Itoa(i)})); ok {
				return l, lit, true
			}
		}
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if l, lit, ok := oversizedNumber(v[k], slices.Concat(loc, []string{k})); ok {
				return l, lit, true
			}
		}
	}
	return nil, "", false
}

// numberTooBig reports whether a number literal is longer than
// maxNumberLength or has an exponent beyond ±maxNumberExponent.
func numberTooBig(s string) bool {
	if len(s) > maxNumberLength {
		return true
	}
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return false
	}
	exp := strings.TrimLeft(strings.TrimLeft(s[i+1:], "+-"), "0")
	if len(exp) > 6 {
		return true
	}
	n, err := strconv.Atoi("0" + exp)
	return err != nil || n > maxNumberExponent
}
