// Package buildinfo says which version of toolgate is running: the module
// version the binary (or the program embedding toolgate) was built with, or
// "dev" for a build from a work tree.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// Stamped by a release build (GoReleaser's ldflags, see .goreleaser.yaml):
//
//	-X github.com/toolgate/toolgate/internal/buildinfo.version=v1.2.3
//	-X github.com/toolgate/toolgate/internal/buildinfo.commit=<full hash>
//	-X github.com/toolgate/toolgate/internal/buildinfo.date=<RFC 3339>
//
// Empty in any other build, which then reads what the Go toolchain recorded
// (the module version; vcs.revision and vcs.time of a build in a checkout).
var version, commit, date string

// Module is toolgate's module path.
const Module = "github.com/toolgate/toolgate"

// Dev is the version of a build without a module version (go build in a
// checkout, go test).
const Dev = "dev"

// Version is toolgate's module version, e.g. "v1.4.0", or Dev.
var Version = sync.OnceValue(func() string {
	if version != "" {
		return version
	}
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

// Info is what `toolgate version`, GET /healthz and GET /v1/config say of
// the running binary.
type Info struct {
	// Version is Version().
	Version string `json:"version"`
	// Commit is the full hash of the commit built, "" when unknown (a
	// build outside a checkout without release stamps).
	Commit string `json:"commit,omitempty"`
	// Modified is true when the checkout had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// Date is when the binary was built (a release) or when its commit was
	// made (a build in a checkout), RFC 3339; "" when unknown.
	Date string `json:"date,omitempty"`
	// Go is the Go version that built the binary, e.g. "go1.26.8".
	Go string `json:"go"`
	// Platform is GOOS/GOARCH, e.g. "linux/amd64".
	Platform string `json:"platform"`
}

// Read is this binary's Info: the release stamps where present, else what
// the toolchain recorded in the build.
var Read = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo()
	return fill(bi, version, commit, date)
})

// fill builds an Info from a build's record and the release stamps, which
// win where set.
func fill(bi *debug.BuildInfo, version, commit, date string) Info {
	in := Info{Version: version, Commit: commit, Date: date, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		if in.Version == "" {
			in.Version = Dev
		}
		return in
	}
	if in.Version == "" {
		in.Version = pick(bi)
	}
	if bi.GoVersion != "" {
		in.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if in.Commit == "" {
				in.Commit = s.Value
			}
		case "vcs.time":
			if in.Date == "" {
				in.Date = s.Value
			}
		case "vcs.modified":
			in.Modified = commit == "" && s.Value == "true"
		}
	}
	return in
}

// String is Info as `toolgate version` prints it: the version on the first
// line, then one line per known field.
func (in Info) String() string {
	s := "toolgate " + in.Version + "\n"
	if in.Commit != "" {
		c := in.Commit
		if in.Modified {
			c += " (with uncommitted changes)"
		}
		s += "commit   " + c + "\n"
	}
	if in.Date != "" {
		s += "built    " + in.Date + "\n"
	}
	return s + "go       " + in.Go + " " + in.Platform + "\n"
}
