package types

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// TestAppendJSONEveryField fills every field of a Result, its Error, its
// Meta and what Meta points to, found by reflection, and holds AppendJSON
// to encoding/json: once with everything set, then once with each field in
// turn back at its zero value. A field added to any of these types is
// filled here without anyone listing it, so an encoder that forgets it (or
// its omitempty) fails this test.
func TestAppendJSONEveryField(t *testing.T) {
	var full Result
	var fields [][]int // the index path of every field, at every depth
	n := 0
	fill(t, reflect.ValueOf(&full).Elem(), "Result", nil, &fields, &n)
	if len(fields) < 20 {
		t.Fatalf("filled %d fields; the walk found too few", len(fields))
	}
	compare(t, "every field set", &full)
	for _, path := range fields {
		var r Result
		m := 0
		fill(t, reflect.ValueOf(&r).Elem(), "Result", nil, new([][]int), &m)
		name := zeroAt(reflect.ValueOf(&r).Elem(), path)
		compare(t, name+" zero", &r)
	}
}

// compare checks AppendJSON against encoding/json, with and without HTML
// escaping.
func compare(t *testing.T, what string, r *Result) {
	t.Helper()
	for _, html := range []bool{true, false} {
		want, err := encode(r, html)
		if err != nil {
			t.Fatalf("%s: encoding/json: %v", what, err)
		}
		got, err := r.AppendJSON(nil, html)
		if err != nil {
			t.Fatalf("%s: AppendJSON: %v", what, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s (escapeHTML %v):\n got %s\nwant %s", what, html, got, want)
		}
	}
}

// fill sets v, and every field below it, to a value that is not the zero
// value, different for each field (n counts them). It records the index path
// of every struct field it passes in fields. A kind it does not know fails
// the test: teach it rather than skip the field.
func fill(t *testing.T, v reflect.Value, name string, path []int, fields *[][]int, n *int) {
	t.Helper()
	*n++
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 12, 1, 10, 4, 5, *n, time.FixedZone("x", 3600))))
		return
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte(`{"n":` + strconv.Itoa(*n) + `,"h":"<&>"}`))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString(name + " <&> \u2028 " + strconv.Itoa(*n))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), name, path, fields, n)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				t.Fatalf("%s.%s is unexported: encoding/json skips it; teach the test what AppendJSON should do", name, f.Name)
			}
			p := append(append([]int{}, path...), i)
			*fields = append(*fields, p)
			fill(t, v.Field(i), name+"."+f.Name, p, fields, n)
		}
	default:
		t.Fatalf("%s is a %s: the test cannot fill it yet; teach it", name, v.Kind())
	}
}

// zeroAt sets the field at path back to its zero value and returns its name.
func zeroAt(v reflect.Value, path []int) string {
	name := v.Type().Name()
	for i, at := range path {
		for v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		name += "." + v.Type().Field(at).Name
		v = v.Field(at)
		if i == len(path)-1 {
			v.SetZero()
		}
	}
	return name
}
