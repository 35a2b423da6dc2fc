package validate

import (
	"bytes"
	"net/url"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaCache compiles the JSON Schemas of one Compile, once for each
// distinct schema: tools imported from one OpenAPI document often answer
// with the same object (GitHub's 643 output schemas are 317 distinct
// ones), and compiling a schema (which checks it against the 2020-12
// metaschema) is most of Compile's time. A compiled schema is read-only,
// so tools share it. Only schemas that compile are kept: a broken one is
// compiled, and reported, for each tool that has it.
type schemaCache struct {
	compiled map[string]*jsonschema.Schema // by the schema's JSON
}

func newSchemaCache() *schemaCache {
	return &schemaCache{compiled: map[string]*jsonschema.Schema{}}
}

// compile compiles the schema written as JSON in b, found at key (such as
// input_schema) of tool, as JSON Schema 2020-12 with format assertions on
// and no external $ref. A nil cache compiles without one.
func (sc *schemaCache) compile(tool, key string, b []byte) (*jsonschema.Schema, error) {
	if sc != nil {
		if s, ok := sc.compiled[string(b)]; ok {
			return s, nil
		}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, &readError{err}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refuseLoader{})
	loc := "https://toolgate.invalid/tools/" + url.PathEscape(tool) + "/" + key + ".json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, err
	}
	if sc != nil {
		sc.compiled[string(b)] = s
	}
	return s, nil
}

// readError is a schema that is not JSON.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
