package expr

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/toolgate/toolgate/internal/jsontext"
)

// maxDepth bounds the nesting of a CEL result converted back to JSON.
const maxDepth = 1000

// adapter turns toolgate's Go values into CEL values lazily: maps and lists
// are wrapped, not copied, and their elements are converted on access
// through this same adapter, so a json.Number deep inside args becomes a
// CEL number only when an expression reads it.
type adapter struct{}

// NativeToValue implements types.Adapter.
func (a adapter) NativeToValue(value any) ref.Val {
	switch v := value.(type) {
	case nil:
		return types.NullValue
	case ref.Val:
		return v
	case json.Number:
		return numberValue(v)
	case map[string]any:
		return types.NewStringInterfaceMap(a, v)
	case []any:
		return types.NewDynamicList(a, v)
	case map[string]json.Number:
		return types.NewMap(a, v)
	case json.RawMessage:
		d, err := jsontext.Decode(v)
		if err != nil {
			return types.NewErr("invalid JSON value: %v", err)
		}
		return a.NativeToValue(d)
	}
	return types.DefaultTypeAdapter.NativeToValue(value)
}

// numberValue converts a JSON number literal: an int when it fits int64, a
// uint when it fits uint64, else a double.
func numberValue(n json.Number) ref.Val {
	s := string(n)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return types.Int(i)
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return types.Uint(u)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeError(err) {
		return types.NewErr("invalid number %q", s)
	}
	return types.Double(f)
}

func isRangeError(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// toJSON converts a CEL result back to plain JSON values.
func toJSON(v ref.Val, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("result nested deeper than %d levels", maxDepth)
	}
	switch v := v.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(v), nil
	case types.Int:
		return json.Number(strconv.FormatInt(int64(v), 10)), nil
	case types.Uint:
		return json.Number(strconv.FormatUint(uint64(v), 10)), nil
	case types.Double:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("result %v is not a JSON number", f)
		}
		return json.Number(jsontext.AppendFloat(nil, f)), nil
	case types.String:
		return string(v), nil
	case types.Bytes:
		return base64.StdEncoding.EncodeToString(v), nil
	case types.Duration, types.Timestamp:
		return fmt.Sprint(v.ConvertToType(types.StringType).Value()), nil
	case *types.Err:
		return nil, v
	case *types.Optional:
		if !v.HasValue() {
			return nil, nil
		}
		return toJSON(v.GetValue(), depth+1)
	case traits.Mapper:
		out := make(map[string]any)
		it := v.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			key, err := mapKey(k)
			if err != nil {
				return nil, err
			}
			val, err := toJSON(v.Get(k), depth+1)
			if err != nil {
				return nil, err
			}
			out[key] = val
		}
		return out, nil
	case traits.Lister:
		n, ok := v.Size().(types.Int)
		if !ok {
			return nil, fmt.Errorf("list without a size")
		}
		out := make([]any, 0, int(n))
		for i := types.Int(0); i < n; i++ {
			val, err := toJSON(v.Get(i), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, val)
		}
		return out, nil
	}
	return nil, fmt.Errorf("result of type %s cannot be written as JSON", typeWord(v))
}

// mapKey turns a CEL map key into a JSON object key.
func mapKey(k ref.Val) (string, error) {
	switch k := k.(type) {
	case types.String:
		return string(k), nil
	case types.Int, types.Uint, types.Bool:
		return fmt.Sprint(k.Value()), nil
	}
	return "", fmt.Errorf("map key of type %s cannot be a JSON object key", typeWord(k))
}

// typeWord names a CEL value's type in JSON words where there is one.
func typeWord(v ref.Val) string {
	switch v.(type) {
	case types.Null:
		return "null"
	case types.Bool:
		return "a boolean"
	case types.Int, types.Uint:
		return "an integer"
	case types.Double:
		return "a number"
	case types.String:
		return "a string"
	case traits.Mapper:
		return "an object"
	case traits.Lister:
		return "an array"
	case *types.Err:
		return "an error"
	}
	if v == nil {
		return "nothing"
	}
	return v.Type().TypeName()
}
