package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestPick(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"toolgate is the program", debug.BuildInfo{Main: debug.Module{Path: Module, Version: "v1.2.3"}}, "v1.2.3"},
		{"work tree build", debug.BuildInfo{Main: debug.Module{Path: Module, Version: "(devel)"}}, Dev},
		{"embedded as a library", debug.BuildInfo{Main: debug.Module{Path: "example.com/agent", Version: "v0.1.0"},
			Deps: []*debug.Module{{Path: "example.com/other", Version: "v9.0.0"}, {Path: Module, Version: "v1.5.0"}}}, "v1.5.0"},
		{"replaced", debug.BuildInfo{Main: debug.Module{Path: "example.com/agent"},
			Deps: []*debug.Module{{Path: Module, Version: "v1.5.0", Replace: &debug.Module{Path: "../toolgate", Version: "v1.5.1"}}}}, "v1.5.1"},
		{"absent", debug.BuildInfo{Main: debug.Module{Path: "example.com/agent", Version: "v0.1.0"}}, Dev},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pick(&tc.bi); got != tc.want {
				t.Errorf("pick = %q, want %q", got, tc.want)
			}
		})
	}
	if Version() == "" {
		t.Error("Version is empty")
	}
}
