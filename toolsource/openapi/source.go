package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"
)

// maxDocumentBytes bounds one document read from a file or a URL.
const maxDocumentBytes = 64 << 20

// reader reads and caches the documents of one import: the root and every
// file or URL its $refs name, each decoded once.
type reader struct {
	client *http.Client
	docs   map[string]any
	// root is the document's location; origins are the other origins its
	// $refs may reach (openapi_ref_origins), as origin gives them.
	root    string
	origins map[string]bool
}

// allowed reports whether a $ref may name the document at loc: one
// relative to the root (a file beside a file, the root's own origin for a
// URL) or on an origin the config allows by name.
func (r *reader) allowed(loc string) error {
	if !isURL(loc) && !isURL(r.root) {
		return nil
	}
	o := origin(loc)
	if isURL(r.root) && o == origin(r.root) || r.origins[o] {
		return nil
	}
	return fmt.Errorf("%s is on another origin (%s); add it to openapi_ref_origins to allow it", loc, o)
}

// origin is a URL's scheme://host:port, the port spelled out.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// location is an absolute file path or URL, without a fragment.
func absLocation(ref string) (string, error) {
	if isURL(ref) {
		u, err := url.Parse(ref)
		if err != nil {
			return "", err
		}
		u.Fragment = ""
		return u.String(), nil
	}
	return filepath.Abs(ref)
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// resolveLocation is where a $ref's document part (before '#') points,
// relative to the document base that holds it.
func resolveLocation(base, ref string) (string, error) {
	if ref == "" {
		return base, nil
	}
	if isURL(ref) {
		return absLocation(ref)
	}
	if isURL(base) {
		b, err := url.Parse(base)
		if err != nil {
			return "", err
		}
		r, err := url.Parse(ref)
		if err != nil {
			return "", err
		}
		return b.ResolveReference(r).String(), nil
	}
	if p, err := url.PathUnescape(ref); err == nil {
		ref = p
	}
	if filepath.IsAbs(ref) {
		return filepath.Clean(ref), nil
	}
	return filepath.Join(filepath.Dir(base), ref), nil
}

// document returns the decoded document at an absolute location.
func (r *reader) document(ctx context.Context, loc string) (any, error) {
	if d, ok := r.docs[loc]; ok {
		return d, nil
	}
	raw, err := r.read(ctx, loc)
	if err != nil {
		return nil, err
	}
	d, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	r.docs[loc] = d
	return d, nil
}

func (r *reader) read(ctx context.Context, loc string) ([]byte, error) {
	if !isURL(loc) {
		f, err := os.Open(loc)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readLimited(f, loc)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", loc, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s: status %d", loc, resp.StatusCode)
	}
	return readLimited(resp.Body, loc)
}

func readLimited(rd io.Reader, loc string) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(rd, maxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", loc, err)
	}
	if len(raw) > maxDocumentBytes {
		return nil, fmt.Errorf("%s is larger than %d MiB", loc, maxDocumentBytes>>20)
	}
	return raw, nil
}

// decode reads JSON (numbers exact, as json.Number) or, when the bytes are
// not JSON, YAML, into the same plain values.
func decode(raw []byte) (any, error) {
	trimmed := bytes.TrimLeft(raw, " \t\r\n\ufeff")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		d := json.NewDecoder(bytes.NewReader(trimmed))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err == nil {
			return v, nil
		}
	}
	var v any
	if err := yaml.UnmarshalWithOptions(raw, &v, yaml.UseOrderedMap()); err != nil {
		return nil, fmt.Errorf("neither JSON nor YAML: %v", err)
	}
	return plain(v)
}

// plain turns YAML-decoded values into what encoding/json with UseNumber
// gives: string-keyed maps, []any, json.Number, string, bool, nil.
func plain(v any) (any, error) {
	switch v := v.(type) {
	case yaml.MapSlice:
		m := make(map[string]any, len(v))
		for _, item := range v {
			k := fmt.Sprint(item.Key)
			pv, err := plain(item.Value)
			if err != nil {
				return nil, err
			}
			m[k] = pv
		}
		return m, nil
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			pv, err := plain(x)
			if err != nil {
				return nil, err
			}
			m[k] = pv
		}
		return m, nil
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			pv, err := plain(x)
			if err != nil {
				return nil, err
			}
			m[fmt.Sprint(k)] = pv
		}
		return m, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			pv, err := plain(x)
			if err != nil {
				return nil, err
			}
			out[i] = pv
		}
		return out, nil
	case nil, string, bool, json.Number:
		return v, nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return json.Number(b), nil
	}
	return fmt.Sprint(v), nil
}
