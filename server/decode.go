package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/toolgate/toolgate/internal/jsontext"
)

// checkDepth scans raw JSON bytes and refuses nesting deeper than max
// before anything is decoded, so a hostile body never builds a deep
// structure. Brackets inside strings do not count. Malformed JSON is left
// to the decoder.
func checkDepth(b []byte, max int) error {
	if at := jsontext.DepthExceeded(b, max); at >= 0 {
		return fmt.Errorf("the JSON is nested more than %d levels deep (at byte %d)", max, at)
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
