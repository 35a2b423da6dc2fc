package execute

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/config"
)

// buildFor builds the attempt's request: by the placement of an imported
// OpenAPI operation when it has one, else by the tool's path template
// (buildRequest). The headers are those placed arguments set.
func buildFor(a *Attempt) (builtRequest, []header, error) {
	if isPlaced(a) {
		return buildPlacedRequest(a)
	}
	built, err := buildRequest(a)
	return built, nil, err
}

// isPlaced reports whether the attempt's tool places its arguments by an
// imported operation's Params.
func isPlaced(a *Attempt) bool {
	return a != nil && a.Tool != nil && a.Dependency != nil && a.Tool.Request != nil && a.Tool.Request.Params != nil
}

// buildPlacedRequest builds the request of a tool imported from an
// OpenAPI document: every argument goes where Request.Params says, never
// by its name or the method. Path values are escaped one segment each
// (url.PathEscape), query values with url.Values (arrays as repeated
// keys, objects as compact JSON), body arguments into one JSON object (or
// as the whole body). Arguments the placement does not name are refused:
// validation keeps them out, so one here is toolgate's fault.
func buildPlacedRequest(a *Attempt) (builtRequest, []header, error) {
	req := a.Tool.Request
	base, err := parseBaseURL(a.Dependency.BaseURL)
	if err != nil {
		return builtRequest{}, nil, err
	}
	pa := placedArgs{byName: map[string]string{}, query: url.Values{}, body: map[string]any{}}
	for _, arg := range slices.Sorted(maps.Keys(a.Args)) {
		p, ok := req.Params[arg]
		if !ok {
			return builtRequest{}, nil, fmt.Errorf("argument %q has no place in the request", arg)
		}
		if err := pa.place(arg, a.Args[arg], p); err != nil {
			return builtRequest{}, nil, err
		}
	}
	for _, p := range req.Params {
		if p.In == config.InBody && p.Required {
			pa.sendBody = true
		}
	}
	path, err := placePath(req.Path, a.Args, pa.byName)
	if err != nil {
		return builtRequest{}, nil, err
	}
	built := builtRequest{method: strings.ToUpper(req.Method), url: placedURL(base, path, pa.query)}
	if pa.sendBody {
		var v any = pa.body
		if pa.hasWhole {
			v = pa.whole
		}
		if built.body, err = marshalCanonical(v); err != nil {
			return builtRequest{}, nil, fmt.Errorf("encoding the body: %w", err)
		}
	}
	return built, pa.headers, nil
}

// placedArgs collects the arguments of a placed request where their
// parameters put them, for buildPlacedRequest to assemble.
type placedArgs struct {
	byName   map[string]string // document path parameter -> argument
	query    url.Values
	headers  []header
	body     map[string]any // the body's properties
	whole    any            // the body, when an argument is all of it
	hasWhole bool
	sendBody bool // some argument goes in the body, or the body is required
}

// place puts the argument arg, of value v, where p says: a path argument
// is only noted (placePath places it), a null query or header argument is
// left out, and a header's value must be one a header can carry.
func (pa *placedArgs) place(arg string, v any, p config.Param) error {
	switch p.In {
	case config.InPath:
		pa.byName[p.Name] = arg
	case config.InQuery:
		if v == nil {
			return nil
		}
		if err := addQuery(pa.query, p.Name, p.Style, v); err != nil {
			return &ArgumentError{Arg: arg, Why: err.Error()}
		}
	case config.InHeader:
		if v == nil {
			return nil
		}
		text, err := joinedText(v, ",") // OpenAPI's simple style
		if err != nil {
			return err
		}
		if why := headerValueProblem(text); why != "" {
			return &ArgumentError{Arg: arg, Why: why}
		}
		pa.headers = append(pa.headers, header{p.Name, text})
	case config.InBody:
		pa.sendBody = true
		if p.Name == "" {
			pa.whole, pa.hasWhole = v, true
		} else {
			pa.body[p.Name] = v
		}
	default:
		return fmt.Errorf("argument %q is placed in %q", arg, p.In)
	}
	return nil
}

// parseBaseURL parses a dependency's base URL, which must be http or https
// and name a host.
func parseBaseURL(raw string) (*url.URL, error) {
	base, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("bad base URL: %w", err)
	}
	if (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("base URL %q is not an http or https URL", raw)
	}
	return base, nil
}

// placedURL is base with path appended to its path and query to its query,
// without base's fragment.
func placedURL(base *url.URL, path placedPath, query url.Values) string {
	u := *base
	u.Path = strings.TrimSuffix(base.Path, "/") + path.decoded
	u.RawPath = strings.TrimSuffix(base.EscapedPath(), "/") + path.escaped
	u.Fragment, u.RawFragment = "", ""
	u.RawQuery = strings.Join(slices.DeleteFunc([]string{base.RawQuery, query.Encode()}, func(q string) bool { return q == "" }), "&")
	return u.String()
}

// header is one header a placed argument sets.
type header struct{ name, value string }

// placedPath is a path with its values placed, in both forms a URL keeps.
type placedPath struct{ decoded, escaped string }

// placePath replaces each {name} of the template with its argument,
// escaped with url.PathEscape so that it stays one segment. A segment
// holding a value may not end up ".", ".." or empty: a server or proxy
// that normalises dot segments would serve another resource.
func placePath(template string, args map[string]any, byName map[string]string) (placedPath, error) {
	var dec, esc strings.Builder
	for i, seg := range strings.Split(template, "/") {
		if i > 0 {
			dec.WriteByte('/')
			esc.WriteByte('/')
		}
		var segDec, segEsc strings.Builder
		placed := ""
		rest := seg
		for {
			open := strings.IndexByte(rest, '{')
			if open < 0 {
				segDec.WriteString(rest)
				segEsc.WriteString(rest)
				break
			}
			end := strings.IndexByte(rest[open:], '}')
			if end < 0 {
				return placedPath{}, fmt.Errorf("path %q has an unclosed {", template)
			}
			name := rest[open+1 : open+end]
			arg, ok := byName[name]
			if !ok {
				return placedPath{}, fmt.Errorf("the path %q needs its parameter %q, which the call did not supply", template, name)
			}
			text, err := scalarText(args[arg])
			if err != nil {
				return placedPath{}, fmt.Errorf("path argument %q: %w", arg, err)
			}
			segDec.WriteString(rest[:open])
			segEsc.WriteString(rest[:open])
			segDec.WriteString(text)
			segEsc.WriteString(url.PathEscape(text))
			placed = arg
			rest = rest[open+end+1:]
		}
		if placed != "" {
			switch s := segDec.String(); s {
			case "", ".", "..":
				return placedPath{}, &ArgumentError{Arg: placed, Why: fmt.Sprintf("it would make the path segment %q (empty, . or ..), which names another resource than the one meant", s)}
			}
		}
		dec.WriteString(segDec.String())
		esc.WriteString(segEsc.String())
	}
	return placedPath{decoded: dec.String(), escaped: esc.String()}, nil
}

// addQuery adds one query argument in its parameter's style (see
// config.Param.Style): a scalar as its literal; an array as the key
// repeated, or its items joined; a deepObject object as name[key]=value;
// any other object as compact JSON.
func addQuery(q url.Values, name, style string, v any) error {
	if obj, ok := v.(map[string]any); ok && style == config.StyleDeepObject {
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			text, err := scalarText(obj[k])
			if err != nil {
				return err
			}
			q.Add(name+"["+k+"]", text)
		}
		return nil
	}
	if list, ok := v.([]any); ok {
		sep := map[string]string{config.StyleForm: ",", config.StyleSpaceDelimited: " ", config.StylePipeDelimited: "|"}[style]
		if sep != "" {
			text, err := joinedText(list, sep)
			if err != nil {
				return err
			}
			q.Add(name, text)
			return nil
		}
		for _, item := range list {
			text, err := scalarText(item)
			if err != nil {
				return err
			}
			q.Add(name, text)
		}
		return nil
	}
	text, err := scalarText(v)
	if err != nil {
		return err
	}
	q.Add(name, text)
	return nil
}

// joinedText is an array's items joined by sep, or a scalar's text.
func joinedText(v any, sep string) (string, error) {
	list, ok := v.([]any)
	if !ok {
		return scalarText(v)
	}
	parts := make([]string, len(list))
	for i, item := range list {
		text, err := scalarText(item)
		if err != nil {
			return "", err
		}
		parts[i] = text
	}
	return strings.Join(parts, sep), nil
}

// setPlacedHeaders sets the headers placed arguments give. Set before the
// dependency's own headers (which then win: credentials come from the
// config), and never the operation key's header.
func setPlacedHeaders(req *http.Request, a *Attempt, headers []header) {
	for _, h := range headers {
		if key := a.Tool.Idempotency.Header; key != "" && strings.EqualFold(h.name, key) {
			continue
		}
		req.Header.Set(h.name, h.value)
	}
}
