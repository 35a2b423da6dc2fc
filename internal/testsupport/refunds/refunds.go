package refunds

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// File is the fixture's toolgate.yaml as it is on disk: the payments
// dependency at http://127.0.0.1:9001 and a memory store.
//
//go:embed testdata/toolgate.yaml
var File string

// An Option changes one part of the fixture (see Set and Delete).
type Option func(yaml.MapSlice) (yaml.MapSlice, error)

// Set sets the value at path (keys joined by dots, such as
// "tools.issue_refund.retry") to value, a YAML text (a scalar, a flow
// map such as "{max_attempts: 1}", or a block). A missing key is added
// at the end of its map.
func Set(path, value string) Option {
	return func(doc yaml.MapSlice) (yaml.MapSlice, error) {
		var v any
		if err := yaml.UnmarshalWithOptions([]byte(value), &v, yaml.UseOrderedMap()); err != nil {
			return nil, fmt.Errorf("set %s: %w", path, err)
		}
		return set(doc, strings.Split(path, "."), v)
	}
}

// Add sets every key of block, a YAML map, under path (as in Set; "" is
// the top of the file): more tools, more dependencies, or top-level keys
// such as store and auth at once.
func Add(path, block string) Option {
	return func(doc yaml.MapSlice) (yaml.MapSlice, error) {
		var m yaml.MapSlice
		if err := yaml.UnmarshalWithOptions([]byte(block), &m, yaml.UseOrderedMap()); err != nil {
			return nil, fmt.Errorf("add to %q: %w", path, err)
		}
		var prefix []string
		if path != "" {
			prefix = strings.Split(path, ".")
		}
		for _, item := range m {
			var err error
			if doc, err = set(doc, append(prefix[:len(prefix):len(prefix)], fmt.Sprint(item.Key)), item.Value); err != nil {
				return nil, err
			}
		}
		return doc, nil
	}
}

// Append adds items, a YAML list, to the end of the list at path (as in
// Set), such as more auth.keys entries; a missing list is made.
func Append(path, items string) Option {
	return func(doc yaml.MapSlice) (yaml.MapSlice, error) {
		var more []any
		if err := yaml.UnmarshalWithOptions([]byte(items), &more, yaml.UseOrderedMap()); err != nil {
			return nil, fmt.Errorf("append to %s: %w", path, err)
		}
		return change(doc, strings.Split(path, "."), func(m yaml.MapSlice, key string) (yaml.MapSlice, error) {
			i := index(m, key)
			if i < 0 {
				return append(m, yaml.MapItem{Key: key, Value: more}), nil
			}
			list, ok := m[i].Value.([]any)
			if !ok && m[i].Value != nil {
				return nil, fmt.Errorf("append to %s: not a list", path)
			}
			m[i].Value = append(list[:len(list):len(list)], more...)
			return m, nil
		})
	}
}

// Rename gives the key at path (as in Set) the name to, in its place.
func Rename(path, to string) Option {
	return func(doc yaml.MapSlice) (yaml.MapSlice, error) {
		return change(doc, strings.Split(path, "."), func(m yaml.MapSlice, key string) (yaml.MapSlice, error) {
			i := index(m, key)
			if i < 0 {
				return nil, fmt.Errorf("rename %s: no such key", path)
			}
			m[i].Key = to
			return m, nil
		})
	}
}

// set sets the value at keys below doc to v.
func set(doc yaml.MapSlice, keys []string, v any) (yaml.MapSlice, error) {
	return change(doc, keys, func(m yaml.MapSlice, key string) (yaml.MapSlice, error) {
		if i := index(m, key); i >= 0 {
			m[i].Value = v
			return m, nil
		}
		return append(m, yaml.MapItem{Key: key, Value: v}), nil
	})
}

// Delete removes the keys at paths (as in Set); each must be there.
func Delete(paths ...string) Option {
	return func(doc yaml.MapSlice) (yaml.MapSlice, error) {
		for _, path := range paths {
			var err error
			doc, err = change(doc, strings.Split(path, "."), func(m yaml.MapSlice, key string) (yaml.MapSlice, error) {
				i := index(m, key)
				if i < 0 {
					return nil, fmt.Errorf("delete %s: no such key", path)
				}
				return append(m[:i:i], m[i+1:]...), nil
			})
			if err != nil {
				return nil, err
			}
		}
		return doc, nil
	}
}

// Config returns the fixture's toolgate.yaml with the payments dependency
// at baseURL (kept as given, so a placeholder a test replaces later works
// too) and opts applied in order. It panics on an option that does not
// apply: that is a mistake in the test.
func Config(baseURL string, opts ...Option) string {
	var doc yaml.MapSlice
	if err := yaml.UnmarshalWithOptions([]byte(File), &doc, yaml.UseOrderedMap()); err != nil {
		panic(fmt.Sprintf("refunds: the fixture does not parse: %v", err))
	}
	opts = append([]Option{Set("dependencies.payments.base_url", quote(baseURL))}, opts...)
	for _, opt := range opts {
		var err error
		if doc, err = opt(doc); err != nil {
			panic("refunds: " + err.Error())
		}
	}
	out, err := yaml.MarshalWithOptions(doc, yaml.IndentSequence(true))
	if err != nil {
		panic(fmt.Sprintf("refunds: %v", err))
	}
	return string(out)
}

// WriteFile writes Config(baseURL, opts...) as toolgate.yaml into a new
// temporary directory of t and returns its path.
func WriteFile(t testing.TB, baseURL string, opts ...Option) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	if err := os.WriteFile(path, []byte(Config(baseURL, opts...)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// change applies last to the map that holds the final key of keys,
// adding the maps on the way that are missing, and returns m changed.
func change(m yaml.MapSlice, keys []string, last func(yaml.MapSlice, string) (yaml.MapSlice, error)) (yaml.MapSlice, error) {
	if len(keys) == 1 {
		return last(m, keys[0])
	}
	i := index(m, keys[0])
	if i < 0 {
		m = append(m, yaml.MapItem{Key: keys[0], Value: yaml.MapSlice{}})
		i = len(m) - 1
	}
	inner, ok := m[i].Value.(yaml.MapSlice)
	if !ok {
		return nil, fmt.Errorf("%s is not a map", keys[0])
	}
	inner, err := change(inner, keys[1:], last)
	if err != nil {
		return nil, err
	}
	m[i].Value = inner
	return m, nil
}

// index returns the position of key in m, or -1.
func index(m yaml.MapSlice, key string) int {
	for i, item := range m {
		if item.Key == key {
			return i
		}
	}
	return -1
}

// quote returns s as a YAML double-quoted string.
func quote(s string) string { return strconv.Quote(s) }
