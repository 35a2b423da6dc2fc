package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/types"
)

// readBody checks the content type and reads the body within the size
// limit and the body read deadline.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	if e := checkContentType(r.Header.Get("Content-Type")); e != nil {
		return nil, e
	}
	if r.ContentLength > s.maxBody {
		return nil, tooLarge(s.maxBody)
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(BodyReadTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	_ = rc.SetReadDeadline(time.Time{})
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, tooLarge(s.maxBody)
		}
		return nil, badRequest("the request body could not be read (%v)", err)
	}
	return body, nil
}

func tooLarge(limit int64) *apiError {
	return &apiError{status: http.StatusRequestEntityTooLarge, code: types.CodeBodyTooLarge,
		message: fmt.Sprintf("the request body is larger than the limit of %d bytes (max_body_bytes)", limit)}
}

// checkContentType requires application/json; parameters such as charset
// are allowed.
func checkContentType(ct string) *apiError {
	unsupported := func(why string) *apiError {
		return &apiError{status: http.StatusUnsupportedMediaType, code: types.CodeUnsupportedType, message: why}
	}
	if ct == "" {
		return unsupported("the request has no Content-Type; send JSON with Content-Type: application/json")
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return unsupported(fmt.Sprintf("the Content-Type %q cannot be parsed; send Content-Type: application/json", clip(ct)))
	}
	if mt != "application/json" {
		return unsupported(fmt.Sprintf("the Content-Type is %q; toolgate only reads application/json", clip(mt)))
	}
	return nil
}

// checkDepth scans raw JSON bytes and refuses nesting deeper than max
// before anything is decoded, so a hostile body never builds a deep
// structure. Brackets inside strings do not count. Malformed JSON is left
// to the decoder.
func checkDepth(b []byte, max int) error {
	depth := 0
	inString, escaped := false, false
	for i, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return fmt.Errorf("the JSON is nested more than %d levels deep (at byte %d)", max, i)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// member is one top-level member of a JSON object body.
type member struct {
	name  string
	value json.RawMessage
}

// members decodes body as exactly one JSON object and returns its members
// in order, each value kept as raw bytes. It refuses invalid JSON, a body
// that is not an object, a repeated member and data after the object.
func members(body []byte, maxDepth int) ([]member, *apiError) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, badRequest("the request body is empty; send a JSON object")
	}
	if err := checkDepth(body, maxDepth); err != nil {
		return nil, badRequest("%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, invalidJSON(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, badRequest("the request body must be a JSON object, got %s", kindOfToken(tok))
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalidJSON(err)
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, invalidJSON(err)
		}
		if seen[name] {
			return nil, badRequest("the field %q appears twice in the request body", clip(name))
		}
		seen[name] = true
		out = append(out, member{name: name, value: v})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, invalidJSON(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badRequest("the request body has data after its JSON object")
	}
	return out, nil
}

func invalidJSON(err error) *apiError {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return badRequest("the request body is not valid JSON: %v (at byte %d)", syn, syn.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return badRequest("the request body is not valid JSON: it ends before the object is closed")
	}
	return badRequest("the request body is not valid JSON: %v", strings.TrimPrefix(err.Error(), "json: "))
}

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
func kindOf(raw json.RawMessage) string {
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

// strict decodes raw into v, refusing unknown fields and keeping numbers
// exact. what names the value in messages ("principal"); valid lists its
// fields for the message about an unknown one.
func strict(raw json.RawMessage, v any, what string, valid ...string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := what
			if te.Field != "" {
				field += "." + te.Field
			}
			return fmt.Errorf("%s must be %s, got a JSON %s", field, goKind(te.Type.Kind().String()), te.Value)
		}
		msg := strings.TrimPrefix(err.Error(), "json: ")
		if name, ok := strings.CutPrefix(msg, "unknown field "); ok {
			return fmt.Errorf("%s has no field %s; valid: %s", what, name, strings.Join(valid, ", "))
		}
		if strings.Contains(msg, "into Number") {
			return fmt.Errorf("%s: a value that must be a number is not one (%s)", what, msg)
		}
		return fmt.Errorf("%s: %s", what, msg)
	}
	return nil
}

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
