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
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/expr"
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
// fastMembers answers the ordinary body; decodeMembers everything else.
func members(body []byte, maxDepth int) ([]member, *apiError) {
	if ms, ok := fastMembers(body, maxDepth); ok {
		return ms, nil
	}
	return decodeMembers(body, maxDepth)
}

// decodeMembers is members by encoding/json's Decoder: the careful path,
// which decides and words every refusal, and the reference fastMembers is
// tested against.
func decodeMembers(body []byte, maxDepth int) ([]member, *apiError) {
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

// The fast path's limits: beyond them a body, however valid, takes the
// encoding/json path. fastMaxDepth keeps skipValue's recursion short and
// well inside encoding/json's own nesting limit (10000), so a depth the
// fast path accepts is one encoding/json accepts; fastMaxMembers bounds
// the quadratic search for a repeated name.
const (
	fastMaxDepth   = 512
	fastMaxMembers = 32
)

// fastMembers is members for the ordinary body, without encoding/json,
// whose Decoder.Token allocates for every token. It answers ok only when
// members would return the same members, byte for byte, and no error:
// body is one JSON object (JSON whitespace around it), no deeper than
// maxDepth, whose member names are unique and free of backslashes,
// control characters and invalid UTF-8 (so a name's bytes are exactly
// what encoding/json would unquote them to), with at most fastMaxMembers
// members. Anything else answers !ok and members takes the careful path,
// which writes every error message.
//
// A value is checked against JSON's grammar and kept as the span of body
// it covers, without the whitespace around it, as Decoder.Decode into a
// json.RawMessage keeps it (but not copied: the span is capped so that
// an append to it cannot write into the rest of body). Like encoding/json,
// it accepts invalid UTF-8 inside a value's strings (kept as it is) and
// does not look for repeated names in nested objects.
func fastMembers(body []byte, maxDepth int) ([]member, bool) {
	s := fastScanner{b: body, max: min(maxDepth, fastMaxDepth)}
	s.space()
	if s.max < 1 || !s.next('{') {
		return nil, false
	}
	var out []member // nil for {}, as members answers
	if s.space(); s.next('}') {
		s.space()
		return out, s.i == len(s.b)
	}
	for {
		name, ok := s.name()
		if !ok || len(out) == fastMaxMembers {
			return nil, false
		}
		for _, m := range out {
			if m.name == string(name) { // no allocation: the compiler compares in place
				return nil, false
			}
		}
		if s.space(); !s.next(':') {
			return nil, false
		}
		s.space()
		start := s.i
		if !s.skipValue(2) {
			return nil, false
		}
		if out == nil {
			out = make([]member, 0, 4) // a call has up to four members
		}
		out = append(out, member{name: string(name), value: s.b[start:s.i:s.i]})
		s.space()
		switch {
		case s.next(','):
			s.space()
		case s.next('}'):
			s.space()
			return out, s.i == len(s.b)
		default:
			return nil, false
		}
	}
}

// fastScanner walks JSON text for fastMembers. Each method answers false
// for anything it does not accept, leaving i wherever it stopped.
type fastScanner struct {
	b   []byte
	i   int
	max int // the deepest nesting accepted; the body's object is depth 1
}

// space skips JSON's whitespace (exactly encoding/json's four bytes).
func (s *fastScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next consumes c when it is the next byte.
func (s *fastScanner) next(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// name scans a member name and returns the bytes between its quotes. It
// declines any escape (an escaped name decodes to other bytes, and two
// spellings could name the same member), a control character (which
// encoding/json refuses) and invalid UTF-8 (which it would replace).
func (s *fastScanner) name() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	start, high := s.i, false
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			name := s.b[start:s.i]
			s.i++
			return name, !high || utf8.Valid(name)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			high = true
		}
	}
	return nil, false
}

// skipValue skips one JSON value that starts at i, checking its syntax
// as encoding/json's scanner does; depth is the depth an object or array
// starting here would have.
func (s *fastScanner) skipValue(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.skipObject(depth)
	case c == '[':
		return s.skipArray(depth)
	case c == '"':
		return s.skipString()
	case c == '-' || c >= '0' && c <= '9':
		return s.skipNumber()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

func (s *fastScanner) skipObject(depth int) bool {
	if depth > s.max {
		return false
	}
	s.i++ // {
	if s.space(); s.next('}') {
		return true
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' || !s.skipString() {
			return false
		}
		if s.space(); !s.next(':') {
			return false
		}
		s.space()
		if !s.skipValue(depth + 1) {
			return false
		}
		s.space()
		switch {
		case s.next(','):
			s.space()
		case s.next('}'):
			return true
		default:
			return false
		}
	}
}

func (s *fastScanner) skipArray(depth int) bool {
	if depth > s.max {
		return false
	}
	s.i++ // [
	if s.space(); s.next(']') {
		return true
	}
	for {
		if !s.skipValue(depth + 1) {
			return false
		}
		s.space()
		switch {
		case s.next(','):
			s.space()
		case s.next(']'):
			return true
		default:
			return false
		}
	}
}

// skipString skips a string, checking its escapes; any other byte from
// 0x20 up is accepted, invalid UTF-8 included, as encoding/json's scanner
// accepts it.
func (s *fastScanner) skipString() bool {
	s.i++ // "
	for s.i < len(s.b) {
		c := s.b[s.i]
		s.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if s.i >= len(s.b) {
				return false
			}
			e := s.b[s.i]
			s.i++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for range 4 {
					if s.i >= len(s.b) || !isHex(s.b[s.i]) {
						return false
					}
					s.i++
				}
			default:
				return false
			}
		}
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// skipNumber skips a number by JSON's grammar (expr.NumberLen). Whatever
// follows it is the caller's to judge ("01" stops after the 0, and the 1
// is then refused where a comma or bracket must be).
func (s *fastScanner) skipNumber() bool {
	n := expr.NumberLen(s.b[s.i:])
	if n < 0 {
		return false
	}
	s.i += n
	return true
}

func (s *fastScanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
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
func kindOf(raw json.RawMessage) string { return types.JSONKind(raw) }

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
