package execute

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// builtRequest is the method, URL and body of an HTTP attempt, before it is
// bound to a context.
type builtRequest struct {
	method string
	url    string
	body   []byte // nil for GET and DELETE
}

// buildRequest maps an attempt to method, URL and body: each {arg} of the
// path is replaced by the argument escaped for where it lands (see
// expandPath); the remaining arguments go in the query string for GET and
// DELETE and in a JSON body otherwise. An argument that cannot be placed
// (a dot segment, a header value with control characters) is an
// *ArgumentError.
func buildRequest(a *Attempt) (builtRequest, error) {
	if err := checkAttempt(a); err != nil {
		return builtRequest{}, err
	}
	method := strings.ToUpper(a.Tool.Request.Method)
	if method == "" {
		method = http.MethodPost
	}

	rest := make(map[string]any, len(a.Args))
	for k, v := range a.Args {
		rest[k] = v
	}
	path, err := expandPath(a.Tool.Request.Path, rest, true)
	if err != nil {
		return builtRequest{}, err
	}
	if err := checkHeaders(a); err != nil {
		return builtRequest{}, err
	}
	base, err := parseBaseURL(a.Dependency.BaseURL)
	if err != nil {
		return builtRequest{}, err
	}
	// The path template may carry a query of its own ("/orders?status=open").
	ref, err := url.Parse(strings.TrimSuffix(base.EscapedPath(), "/") + path)
	if err != nil {
		return builtRequest{}, fmt.Errorf("bad path: %w", err)
	}
	u := *base
	u.Path, u.RawPath, u.Fragment, u.RawFragment = ref.Path, ref.RawPath, "", ""
	queries := []string{base.RawQuery, ref.RawQuery}

	built := builtRequest{method: method}
	if method == http.MethodGet || method == http.MethodDelete {
		query, err := queryString(rest)
		if err != nil {
			return builtRequest{}, err
		}
		queries = append(queries, query)
	} else {
		built.body, err = marshalCanonical(rest)
		if err != nil {
			return builtRequest{}, fmt.Errorf("encoding the body: %w", err)
		}
	}
	u.RawQuery = strings.Join(slices.DeleteFunc(queries, func(q string) bool { return q == "" }), "&")
	built.url = u.String()
	return built, nil
}

// checkAttempt checks that the attempt has a tool, with a request, and a
// dependency to send it to.
func checkAttempt(a *Attempt) error {
	switch {
	case a.Tool == nil:
		return errors.New("the attempt has no tool")
	case a.Dependency == nil:
		return errors.New("the tool has no dependency")
	case a.Tool.Request == nil:
		return errors.New("the tool has no request (method and path)")
	}
	return nil
}

// checkHeaders checks the headers the request will carry: the operation
// key's (an *ArgumentError) and the dependency's own.
func checkHeaders(a *Attempt) error {
	if e := checkOperationKeyHeader(a); e != nil {
		return e
	}
	for name, v := range a.Dependency.Headers {
		if why := headerValueProblem(v); why != "" {
			return fmt.Errorf("the dependency's header %s cannot be sent: %s", name, why)
		}
	}
	return nil
}

// bodyReader returns a fresh reader of the body, or nil.
func (b builtRequest) bodyReader() io.Reader {
	if b.body == nil {
		return nil
	}
	return bytes.NewReader(b.body)
}

// expandPath replaces each {name} in the path template with the string form
// of args[name], escaped for where it lands, and deletes the argument from
// args. Before the template's '?' a value is path-escaped (PathEscape: it
// stays inside its one segment, '/' included), and a segment holding a
// value may not end up ".", ".." or empty: a proxy or server that
// normalises dot segments would serve another resource. After the '?' a
// value is query-escaped (QueryEscape: '&', '=', '+' and '#' included), so
// that it stays the one parameter the template names. consume false leaves
// args as they are (a check that builds nothing else).
func expandPath(template string, args map[string]any, consume bool) (string, error) {
	var out strings.Builder
	inQuery := false
	segStart, segArg := 0, "" // where the current path segment began; the argument placed in it
	endSegment := func() error {
		if segArg == "" {
			return nil
		}
		switch seg := out.String()[segStart:]; seg {
		case "", ".", "..":
			return &ArgumentError{Arg: segArg, Why: fmt.Sprintf("it would make the path segment %q, which names another resource than the one meant (an empty segment, . or ..)", seg)}
		}
		return nil
	}
	for i := 0; i < len(template); {
		c := template[i]
		switch {
		case c == '{':
			end := strings.IndexByte(template[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("path %q has an unclosed {", template)
			}
			name := template[i+1 : i+end]
			value, ok := args[name]
			if !ok {
				return "", fmt.Errorf("the path %q needs argument %q, which the call did not supply", template, name)
			}
			text, err := scalarText(value)
			if err != nil {
				return "", fmt.Errorf("path argument %q: %w", name, err)
			}
			if inQuery {
				out.WriteString(url.QueryEscape(text))
			} else {
				out.WriteString(url.PathEscape(text))
				segArg = name
			}
			if consume {
				delete(args, name)
			}
			i += end + 1
			continue
		case !inQuery && (c == '/' || c == '?'):
			if err := endSegment(); err != nil {
				return "", err
			}
			out.WriteByte(c)
			segStart, segArg, inQuery = out.Len(), "", c == '?'
		default:
			out.WriteByte(c)
		}
		i++
	}
	if !inQuery {
		if err := endSegment(); err != nil {
			return "", err
		}
	}
	return out.String(), nil
}

// queryString encodes arguments as a query string, keys sorted: scalars as
// their literal, arrays as repeated keys, objects as compact JSON. A null
// argument is left out: "absent" is how a query string says null.
func queryString(args map[string]any) (string, error) {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	values := url.Values{}
	for _, k := range keys {
		v := args[k]
		if v == nil {
			continue
		}
		if list, ok := v.([]any); ok {
			for _, item := range list {
				text, err := scalarText(item)
				if err != nil {
					return "", fmt.Errorf("query argument %q: %w", k, err)
				}
				values.Add(k, text)
			}
			continue
		}
		text, err := scalarText(v)
		if err != nil {
			return "", fmt.Errorf("query argument %q: %w", k, err)
		}
		values.Add(k, text)
	}
	return values.Encode(), nil
}

// scalarText is an argument's string form in a path or query: a string as
// is, a json.Number as its literal, anything else as compact JSON.
func scalarText(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	}
	b, err := marshalCanonical(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// marshalCanonical encodes v as compact JSON with object keys sorted,
// json.Number written exactly and no HTML escaping: the canonical form of
// arguments.
func marshalCanonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
