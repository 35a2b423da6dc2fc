package types

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// MaxPrincipalStringBytes bounds each string naming something in a
// principal read from a request: its id, each permission, and the names of
// its limits and attrs. They reach logs, headers, quota keys and the
// dashboard, so they are also refused when they hold a control character
// (CR, LF, NUL, tab, DEL, ...).
const MaxPrincipalStringBytes = 256

// principalFields are the fields a principal document may hold.
var principalFields = []string{"id", "permissions", "limits", "attrs"}

// ParsePrincipal reads a principal strictly: a JSON object with id
// (required), permissions, limits (numbers, kept exact) and attrs; any other
// field, or a field of the wrong JSON kind, is an error naming it. The
// server's POST /v1/runs and `toolgate call --principal` read principals
// with it.
func ParsePrincipal(raw []byte) (Principal, error) {
	var p Principal
	if kind := JSONKind(raw); kind != "an object" {
		return p, fmt.Errorf(`"principal" must be a JSON object such as {"id": "cust_42"}, got %s`, kind)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Principal{}, principalError(err)
	}
	if p.ID == "" {
		return p, errors.New(`principal.id is required: who the run acts for (a customer or user id)`)
	}
	if err := checkPrincipalStrings(&p); err != nil {
		return Principal{}, err
	}
	return p, nil
}

// checkPrincipalStrings applies MaxPrincipalStringBytes and the refusal
// of control characters to p's id, permissions, and limit and attr names.
func checkPrincipalStrings(p *Principal) error {
	if err := checkPrincipalString("principal.id", p.ID); err != nil {
		return err
	}
	for i, perm := range p.Permissions {
		if err := checkPrincipalString(fmt.Sprintf("principal.permissions[%d]", i), perm); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Limits)) {
		if err := checkPrincipalString("a name in principal.limits", name); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Attrs)) {
		if err := checkPrincipalString("a name in principal.attrs", name); err != nil {
			return err
		}
	}
	return nil
}

// checkPrincipalString refuses s, the value of field, when it is longer
// than MaxPrincipalStringBytes or holds a control character.
func checkPrincipalString(field, s string) error {
	if len(s) > MaxPrincipalStringBytes {
		return fmt.Errorf("%s is %d bytes long; at most %d are allowed", field, len(s), MaxPrincipalStringBytes)
	}
	for i, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("%s holds the character %U at byte %d; control characters (CR, LF, NUL, tab, ...) are not allowed", field, r, i)
		}
	}
	return nil
}

// principalError rewords encoding/json's error about a principal document
// for the person or model that wrote it.
func principalError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := "principal"
		if te.Field != "" {
			field += "." + te.Field
		}
		return fmt.Errorf("%s must be %s, got a JSON %s", field, goKind(te.Type.Kind().String()), te.Value)
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if name, ok := strings.CutPrefix(msg, "unknown field "); ok {
		return fmt.Errorf("principal has no field %s; valid: %s", name, strings.Join(principalFields, ", "))
	}
	if strings.Contains(msg, "into Number") {
		return fmt.Errorf("principal: a value that must be a number is not one (%s)", msg)
	}
	return fmt.Errorf("principal: %s", msg)
}

// goKind names the JSON kind a Go kind decodes from, with its article.
func goKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "bool":
		return "a boolean"
	}
	return "a number"
}

// JSONKind names the JSON kind of a raw value by its first byte, with its
// article ("an object", "a string", ...; "nothing" for blank input). It does
// not validate the value.
func JSONKind(raw []byte) string {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
