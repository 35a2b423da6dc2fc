// Package buildinfo says which version of toolgate is running: the module
// version the binary (or the program embedding toolgate) was built with, or
// "dev" for a build from a work tree.
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// Module is toolgate's module path.
const Module = "github.com/toolgate/toolgate"

// Dev is the version of a build without a module version (go build in a
// checkout, go test).
const Dev = "dev"

// Version is toolgate's module version, e.g. "v1.4.0", or Dev.
var Version = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Dev
	}
	return pick(bi)
})

// pick finds toolgate's version in a build: the main module when toolgate
// is the program, else the dependency of that path.
func pick(bi *debug.BuildInfo) string {
	mod := &bi.Main
	if mod.Path != Module {
		mod = nil
		for _, d := range bi.Deps {
			if d.Path == Module {
				mod = d
				if d.Replace != nil && d.Replace.Version != "" {
					mod = d.Replace
				}
				break
			}
		}
	}
	if mod == nil || mod.Version == "" || mod.Version == "(devel)" {
		return Dev
	}
	return mod.Version
}
