package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `toolgate help` prints exactly testdata/help.golden: every subcommand, in
// the table's order, with its summary. A command left out of the table
// (or a summary changed by accident) fails here; a new one updates the
// golden file.
func TestHelpListsEveryCommand(t *testing.T) {
	want, err := os.ReadFile("testdata/help.golden")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "help")
	if code != 0 || errOut != "" {
		t.Fatalf("help: exit %d, stderr %q", code, errOut)
	}
	got, wantLines := strings.Split(out, "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(got), len(wantLines)); i++ {
		g, w := line(got, i), line(wantLines, i)
		if g != w {
			t.Fatalf("toolgate help differs from testdata/help.golden at line %d:\n got: %q\nwant: %q\n(whole output:\n%s)", i+1, g, w, out)
		}
	}
}

// line is lines[i], or "(none)" past the end.
func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(none)"
}

// Every command of the table answers its own --help with its usage line
// and its summary, and an unknown name is a usage error listing them all.
func TestEveryCommandHasHelp(t *testing.T) {
	names := map[string]bool{}
	for _, c := range commands() {
		if names[c.name] {
			t.Errorf("command %q is listed twice", c.name)
		}
		names[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			args := []string{c.name, "--help"}
			switch c.name { // commands whose flags belong to a subcommand
			case "runs":
				args = []string{c.name, "show", "--help"}
			case "sim":
				args = []string{c.name, "payments", "--help"}
			}
			code, _, errOut := runCLI(t, args...)
			if code != 0 || !strings.Contains(errOut, "Usage: toolgate "+c.name) {
				t.Fatalf("%s: exit %d:\n%s", strings.Join(args, " "), code, errOut)
			}
			if !strings.Contains(errOut, c.summary) {
				t.Errorf("%s --help lacks its summary %q:\n%s", c.name, c.summary, errOut)
			}
		})
	}
	code, _, errOut := runCLI(t, "nosuch")
	if code != 2 || !strings.Contains(errOut, `unknown command "nosuch"`) {
		t.Fatalf("unknown command: exit %d:\n%s", code, errOut)
	}
	for name := range names {
		if !strings.Contains(errOut, "\n  "+name+" ") {
			t.Errorf("the usage after an unknown command does not list %q", name)
		}
	}
}

// Nothing in this package wires itself from init(): the command table and
// runServe's sequence are the whole wiring.
func TestNoInitWiring(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
				t.Errorf("%s has an init(): add a subcommand to commands.go, a serve subsystem to runServe", fset.Position(fn.Pos()))
			}
		}
	}
}
