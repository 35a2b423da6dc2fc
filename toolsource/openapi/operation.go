package openapi

import (
	"fmt"
	"maps"
	"mime"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// methods are the operation keys of a path item, in the order tools are
// made.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// effects are what each method suggests (docs/openapi.md).
var effects = map[string]types.Effect{
	"GET": types.EffectRead, "HEAD": types.EffectRead,
	"PUT": types.EffectIdempotent, "DELETE": types.EffectIdempotent,
	"POST": types.EffectWrite, "PATCH": types.EffectWrite,
}

// ignoredHeaders are header parameters OpenAPI says to ignore: the
// request's content negotiation and credentials are toolgate's and the
// dependency's config's.
var ignoredHeaders = map[string]bool{"accept": true, "content-type": true, "authorization": true}

// operation is one operation of the document being converted.
type operation struct {
	method, path string
	id           string // operationId, "" when the document gives none
	op           map[string]any
	base         string // the document holding op
	pathParams   []any  // the path item's parameters
	pathBase     string
}

// label names the operation in a report.
func (o *operation) label() string {
	if o.id != "" {
		return o.id
	}
	return o.method + " " + o.path
}

// param is a parameter of an operation, resolved.
type param struct {
	name, in    string
	style       string // config.Param.Style
	required    bool
	description string
	schema      any
	base        string
}

// tool converts one operation; a non-empty reason says why it was skipped.
func (c *converter) tool(o *operation, dep string) (config.ImportedTool, string) {
	it := config.ImportedTool{Name: toolName(o.id, o.method, o.path), Effect: effects[o.method]}
	if o.id != "" && it.Name != o.id {
		it.SourceName = o.id
	}
	if _, ok := effects[o.method]; !ok {
		return it, fmt.Sprintf("method %s is not one toolgate sends (GET, HEAD, PUT, DELETE, POST, PATCH)", o.method)
	}
	params, why := c.params(o)
	if why != "" {
		return it, why
	}
	props := map[string]any{}
	var required []any
	placement := map[string]config.Param{}
	for _, p := range params {
		name := p.name
		if _, taken := placement[name]; taken {
			name = p.in + "_" + p.name
		}
		s := c.convert(p.base, p.schema)
		if m, ok := s.(map[string]any); ok && p.description != "" && m["description"] == nil {
			m = maps.Clone(m)
			m["description"] = p.description
			s = m
		}
		props[name] = s
		placement[name] = config.Param{In: p.in, Name: p.name, Style: p.style}
		if p.required || p.in == config.InPath {
			required = append(required, name)
		}
	}
	if why := c.body(o, props, &required, placement); why != "" {
		return it, why
	}
	in := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		in["required"] = required
	}
	it.InputSchema = in
	it.OutputSchema = c.output(o)
	for _, s := range []map[string]any{it.InputSchema, it.OutputSchema} {
		if err := config.CheckSchemaBounds(s, 0); err != nil {
			return it, err.Error() // a $ref bomb: refused before anything expands it
		}
	}
	it.Description = description(o, dep)
	it.Request = &config.Request{Method: o.method, Path: o.path, Params: placement}
	return it, ""
}

// params resolves the path item's and the operation's parameters (the
// operation's replace the path item's of the same name and location),
// in document order, path parameters first.
func (c *converter) params(o *operation) ([]param, string) {
	var list []param
	index := map[string]int{}
	add := func(base string, raw []any) string {
		for _, r := range raw {
			m, b, err := c.r.deref(base, r)
			if err != nil {
				return "a parameter cannot be read: " + err.Error()
			}
			p, keep, why := readParam(m, b)
			if why != "" {
				return why
			}
			if !keep {
				continue
			}
			key := p.in + "\x00" + p.name
			if i, ok := index[key]; ok {
				list[i] = p
				continue
			}
			index[key] = len(list)
			list = append(list, p)
		}
		return ""
	}
	if why := add(o.pathBase, o.pathParams); why != "" {
		return nil, why
	}
	ops, _ := o.op["parameters"].([]any)
	if why := add(o.base, ops); why != "" {
		return nil, why
	}
	for _, name := range placeholders(o.path) {
		if _, ok := index[config.InPath+"\x00"+name]; !ok {
			return nil, fmt.Sprintf("the path has {%s} but no path parameter describes it", name)
		}
	}
	slices.SortStableFunc(list, func(a, b param) int {
		return order(a.in) - order(b.in)
	})
	return list, ""
}

// readParam reads the parameter object m, found in the document at base.
// keep is false for a parameter toolgate does not send and need not: an
// ignored header, an optional cookie. why says why the operation cannot
// be imported: a parameter without a name, a required cookie, an unknown
// location.
func readParam(m map[string]any, base string) (p param, keep bool, why string) {
	p = param{base: base}
	p.name, _ = m["name"].(string)
	p.in, _ = m["in"].(string)
	p.required, _ = m["required"].(bool)
	p.description, _ = m["description"].(string)
	p.schema = m["schema"]
	if p.schema == nil {
		if content, ok := m["content"].(map[string]any); ok {
			if mt := jsonMedia(content); mt != nil {
				p.schema = mt["schema"]
			}
		}
	}
	if p.name == "" {
		return p, false, "a parameter has no name"
	}
	switch p.in {
	case config.InPath:
	case config.InQuery:
		p.style = queryStyle(m)
	case config.InHeader:
		if ignoredHeaders[strings.ToLower(p.name)] {
			return p, false, ""
		}
	case "cookie":
		if p.required {
			return p, false, fmt.Sprintf("cookie parameter %s is required; toolgate does not send cookies", p.name)
		}
		return p, false, ""
	default:
		return p, false, fmt.Sprintf("parameter %s is in %q, which is not path, query, header or cookie", p.name, p.in)
	}
	return p, true, ""
}

// queryStyle is config.Param.Style for a query parameter's style and
// explode (explode defaults to true for form, false for the others).
func queryStyle(m map[string]any) string {
	style, _ := m["style"].(string)
	explode, set := m["explode"].(bool)
	switch style {
	case "", "form":
		if set && !explode {
			return config.StyleForm
		}
		return ""
	case "spaceDelimited", "pipeDelimited":
		if set && explode {
			return ""
		}
		return style
	case "deepObject":
		return config.StyleDeepObject
	}
	return ""
}

func order(in string) int {
	return map[string]int{config.InPath: 0, config.InQuery: 1, config.InHeader: 2}[in]
}

// placeholders are the {names} of a path template.
func placeholders(path string) []string {
	var names []string
	for {
		open := strings.IndexByte(path, '{')
		if open < 0 {
			return names
		}
		end := strings.IndexByte(path[open:], '}')
		if end < 0 {
			return names
		}
		names = append(names, path[open+1:open+end])
		path = path[open+end+1:]
	}
}

// body adds the JSON request body to the input schema. An object body's
// properties become arguments beside the parameters; a property whose
// name a parameter already has is the argument body_<name>. Any other
// body is the one argument body (request_body when a parameter is named
// body).
func (c *converter) body(o *operation, props map[string]any, required *[]any, placement map[string]config.Param) string {
	raw, ok := o.op["requestBody"]
	if !ok {
		return ""
	}
	rb, base, err := c.r.deref(o.base, raw)
	if err != nil {
		return "the request body cannot be read: " + err.Error()
	}
	bodyRequired, _ := rb["required"].(bool)
	content, _ := rb["content"].(map[string]any)
	mt := jsonMedia(content)
	if mt == nil {
		if len(content) == 0 {
			return ""
		}
		return fmt.Sprintf("the request body is %s; toolgate sends JSON bodies only", strings.Join(slices.Sorted(maps.Keys(content)), ", "))
	}
	s, _ := c.convert(base, mt["schema"]).(map[string]any)
	if s == nil {
		s = map[string]any{}
	}
	if isObjectSchema(s) {
		return spreadBody(s, bodyRequired, props, required, placement)
	}
	name := "body"
	if _, taken := placement[name]; taken {
		name = "request_body"
		if _, taken := placement[name]; taken {
			return "the request body's argument names body and request_body are both parameters"
		}
	}
	if d, ok := rb["description"].(string); ok && s["description"] == nil {
		s = maps.Clone(s)
		s["description"] = d
	}
	props[name] = s
	placement[name] = config.Param{In: config.InBody, Required: bodyRequired}
	if bodyRequired {
		*required = append(*required, name)
	}
	return ""
}

// spreadBody adds each property of the object body schema s as an
// argument of its own (body_<name> when a parameter has the name), in name
// order; those the body requires are required when the body is.
func spreadBody(s map[string]any, bodyRequired bool, props map[string]any, required *[]any, placement map[string]config.Param) string {
	inBody := map[string]bool{}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				inBody[name] = true
			}
		}
	}
	for _, prop := range slices.Sorted(maps.Keys(s["properties"].(map[string]any))) {
		name := prop
		if _, taken := placement[name]; taken {
			name = "body_" + prop
			if _, taken := placement[name]; taken {
				return fmt.Sprintf("body property %s clashes with the parameters %s and %s", prop, prop, name)
			}
		}
		props[name] = s["properties"].(map[string]any)[prop]
		placement[name] = config.Param{In: config.InBody, Name: prop, Required: bodyRequired}
		if bodyRequired && inBody[prop] {
			*required = append(*required, name)
		}
	}
	return ""
}

// mediaRank ranks a content map's key as a JSON media type:
// application/json 3, any */*+json 2, */* 1, anything else (or a key that
// does not parse) 0.
func mediaRank(key string) int {
	mt, _, err := mime.ParseMediaType(key)
	switch {
	case err != nil:
		return 0
	case mt == "application/json":
		return 3
	case strings.HasSuffix(mt, "+json"):
		return 2
	case mt == "*/*":
		return 1
	}
	return 0
}

// jsonMedia picks the JSON media type of a content map: application/json,
// else any */*+json, else */*.
func jsonMedia(content map[string]any) map[string]any {
	var best map[string]any
	bestRank := 0
	for _, key := range slices.Sorted(maps.Keys(content)) {
		if rank := mediaRank(key); rank > bestRank {
			m, _ := content[key].(map[string]any)
			if m == nil {
				m = map[string]any{}
			}
			best, bestRank = m, rank
		}
	}
	return best
}

// output is the JSON object schema of the first 2xx JSON response, if
// any, without its required lists: toolgate refuses an answer that breaks
// a tool's output schema (invalid_output), and documents often require
// fields their service leaves out (GitHub's own examples do). The types
// still hold.
func (c *converter) output(o *operation) map[string]any {
	responses, _ := o.op["responses"].(map[string]any)
	codes := slices.Sorted(maps.Keys(responses))
	for _, code := range codes {
		if !strings.HasPrefix(code, "2") {
			continue
		}
		resp, base, err := c.r.deref(o.base, responses[code])
		if err != nil {
			continue
		}
		content, _ := resp["content"].(map[string]any)
		mt := jsonMedia(content)
		if mt == nil || mt["schema"] == nil {
			continue
		}
		s, _ := c.answers.convert(base, mt["schema"]).(map[string]any)
		if s != nil && s["type"] == "object" {
			return s
		}
		return nil
	}
	return nil
}

// description is what the model reads: the summary, then the description,
// at most config.MaxDescriptionBytes (cut with a marker); a sentence naming the operation when the
// document has neither.
func description(o *operation, dep string) string {
	summary, _ := o.op["summary"].(string)
	desc, _ := o.op["description"].(string)
	summary, desc = strings.TrimSpace(summary), strings.TrimSpace(desc)
	text := summary
	switch {
	case text == "":
		text = desc
	case desc != "" && desc != summary:
		text += "\n\n" + desc
	}
	if text == "" {
		text = fmt.Sprintf("%s %s on %s.", o.method, o.path, dep)
	}
	return config.CutDescription(text)
}
