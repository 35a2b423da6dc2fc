package buildinfo

import (
	"runtime/debug"
	"strings"
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

func TestFill(t *testing.T) {
	checkout := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module, Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		name                  string
		bi                    *debug.BuildInfo
		version, commit, date string
		want                  Info
	}{
		{"checkout", checkout, "", "", "",
			Info{Version: Dev, Commit: "0123456789abcdef0123456789abcdef01234567", Modified: true, Date: "2026-12-01T10:00:00Z", Go: "go1.26.8"}},
		{"release stamps win", checkout, "v1.2.0", "fedcba9876543210fedcba9876543210fedcba98", "2026-12-02T00:00:00Z",
			Info{Version: "v1.2.0", Commit: "fedcba9876543210fedcba9876543210fedcba98", Date: "2026-12-02T00:00:00Z", Go: "go1.26.8"}},
		{"go install of a tag", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module, Version: "v1.2.0"}}, "", "", "",
			Info{Version: "v1.2.0", Go: "go1.26.8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fill(tc.bi, tc.version, tc.commit, tc.date)
			got.Platform = ""
			if got != tc.want {
				t.Errorf("fill = %+v, want %+v", got, tc.want)
			}
		})
	}
	if s := Read().String(); !strings.HasPrefix(s, "toolgate ") || !strings.Contains(s, "\ngo       go1.") {
		t.Errorf("String = %q", s)
	}
}
