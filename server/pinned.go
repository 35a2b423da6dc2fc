package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// pinnedPrincipals maps each key name to the principal its config entry
// pins (auth.keys[].principal), for the keys that pin one.
func pinnedPrincipals(keys []config.Key) map[string]*types.Principal {
	pinned := map[string]*types.Principal{}
	for _, k := range keys {
		if k.Principal != nil {
			p := k.Principal.Clone()
			pinned[k.Name] = &p
		}
	}
	return pinned
}

// withinPinned returns the principal a run of a pinned key acts for: the
// pinned one when asked is nil, else asked with what it leaves out taken
// from the pinned one; or an error when asked is not the pinned principal
// or is wider than it. Narrower is allowed: the same id, a subset of the
// permissions, limits the pinned principal has with values no greater,
// attributes equal to the pinned ones.
func withinPinned(pinned *types.Principal, asked *types.Principal) (types.Principal, *apiError) {
	if asked == nil {
		return pinned.Clone(), nil
	}
	forbid := func(format string, args ...any) *apiError {
		return &apiError{status: 403, code: types.CodeForbidden,
			message: "this key acts for the principal its config pins (" + pinned.ID + "): " + fmt.Sprintf(format, args...)}
	}
	if asked.ID != pinned.ID {
		return types.Principal{}, forbid("it may not open a run for principal %q", clip(asked.ID))
	}
	p := asked.Clone()
	for _, perm := range asked.Permissions {
		if !slices.Contains(pinned.Permissions, perm) && !slices.Contains(pinned.Permissions, "*") {
			return types.Principal{}, forbid("permission %q is not one of its permissions %q", clip(perm), pinned.Permissions)
		}
	}
	if asked.Permissions == nil {
		p.Permissions = slices.Clone(pinned.Permissions)
	}
	p.Limits = maps.Clone(pinned.Limits)
	for _, name := range slices.Sorted(maps.Keys(asked.Limits)) {
		limit, ok := pinned.Limits[name]
		if !ok {
			return types.Principal{}, forbid("limit %q is not one of its limits", clip(name))
		}
		if !numberAtMost(asked.Limits[name], limit) {
			return types.Principal{}, forbid("limit %s %s is above its %s", clip(name), clip(asked.Limits[name].String()), limit)
		}
		if p.Limits == nil {
			p.Limits = map[string]json.Number{}
		}
		p.Limits[name] = asked.Limits[name]
	}
	if len(p.Limits) == 0 {
		p.Limits = nil
	}
	attrs := pinned.Clone().Attrs
	for _, name := range slices.Sorted(maps.Keys(asked.Attrs)) {
		want, ok := pinned.Attrs[name]
		if !ok || !sameValue(asked.Attrs[name], want) {
			return types.Principal{}, forbid("attribute %q differs from its own", clip(name))
		}
	}
	p.Attrs = attrs
	return p, nil
}

// sameValue reports whether a and b encode to the same JSON (a number read
// from YAML and the same number read from JSON are the same).
func sameValue(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// numberAtMost reports whether the JSON number a is at most b, exactly.
func numberAtMost(a, b json.Number) bool {
	x, ok1 := new(big.Rat).SetString(strings.TrimSpace(a.String()))
	y, ok2 := new(big.Rat).SetString(strings.TrimSpace(b.String()))
	return ok1 && ok2 && x.Cmp(y) <= 0
}
