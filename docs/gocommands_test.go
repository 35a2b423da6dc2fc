package docs

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goValueFlags are the go command's flags that take a value; the others
// the documentation uses (-v, -race) take none.
var goValueFlags = map[string]bool{
	"run": true, "bench": true, "count": true, "timeout": true, "o": true, "tags": true,
	"cpu": true, "benchtime": true, "p": true, "parallel": true, "skip": true,
}

// goArgs splits a go command's arguments into its flags (by name, without
// dashes) and the rest, the packages. go test and go build take flags
// after the packages too; for go run (run true) the arguments after the
// package are the program's.
func goArgs(args []string, run bool) (flags map[string]string, rest []string) {
	flags = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || (run && len(rest) > 0) {
			rest = append(rest, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && goValueFlags[name] && i+1 < len(args) {
			i++
			value = args[i]
		}
		flags[name] = value
	}
	return flags, rest
}

// checkGo checks a go test, build, run or vet command.
func (c *commandChecker) checkGo(args []string) (string, error) {
	if len(args) == 0 {
		return "", fmt.Errorf("go without a command")
	}
	flags, rest := goArgs(args[1:], args[0] == "run")
	switch args[0] {
	case "test":
		if len(rest) == 0 {
			rest = []string{"."}
		}
		var hows []string
		for _, pkg := range rest {
			how, err := c.checkGoTest(pkg, flags)
			if err != nil {
				return "", err
			}
			hows = append(hows, how)
		}
		return strings.Join(hows, "; "), nil
	case "build", "vet":
		pkg := "."
		if len(rest) > 0 {
			pkg = rest[0]
		}
		dir, err := c.goPackage(pkg)
		if err != nil {
			return "", err
		}
		if out := flags["o"]; out != "" {
			c.built[out] = dir
		}
		return "the package " + pkg + " exists", nil
	case "run":
		if len(rest) == 0 {
			return "", fmt.Errorf("go run without a package")
		}
		dir, err := c.goPackage(rest[0])
		if err != nil {
			return "", err
		}
		switch dir {
		case "cmd/toolgate":
			return checkToolgate(binary, "toolgate", rest[1:])
		case "cmd/toolgate-bench":
			if c.bench == nil {
				return "", fmt.Errorf("no toolgate-bench binary to check %q with", strings.Join(rest, " "))
			}
			bin, err := c.bench()
			if err != nil {
				return "", err
			}
			return checkToolgate(bin, "toolgate-bench", rest[1:])
		}
		return "the package " + rest[0] + " exists", nil
	}
	return "", fmt.Errorf("no check knows go %s", args[0])
}

// goPackage is the directory (relative to the root, slash-separated) of a
// package argument, which must hold Go files.
func (c *commandChecker) goPackage(pkg string) (string, error) {
	rel := filepath.ToSlash(filepath.Clean(filepath.Join(c.cwd, strings.TrimSuffix(pkg, "/..."))))
	files, err := filepath.Glob(filepath.Join(c.root, rel, "*.go"))
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("the package %s has no Go files (at %s)", pkg, rel)
	}
	return rel, nil
}

// checkGoTest checks that the package exists and that -run (or -bench)
// selects a test (or benchmark) declared in it, each alternative of its
// top level: a renamed test breaks the page that runs it.
func (c *commandChecker) checkGoTest(pkg string, flags map[string]string) (string, error) {
	dir, err := c.goPackage(pkg)
	if err != nil {
		return "", err
	}
	funcs, testFlags, err := testFiles(filepath.Join(c.root, dir), flags["tags"])
	if err != nil {
		return "", err
	}
	how := "the package " + pkg + " exists"
	for name := range flags {
		if !goTestFlags[name] && !testFlags[name] {
			return "", fmt.Errorf("-%s is neither go test's flag nor one the tests of %s declare (flag.Bool(%q, ...))", name, dir, name)
		}
		if testFlags[name] {
			how += "; its tests declare -" + name
		}
	}
	for _, sel := range []struct{ flag, prefix string }{{"run", "Test"}, {"bench", "Benchmark"}} {
		pattern, ok := flags[sel.flag]
		if !ok || (sel.flag == "run" && pattern == "^$" && flags["bench"] != "") {
			continue // -run '^$' with -bench: no test, on purpose
		}
		for _, alt := range topAlternatives(firstLevel(pattern)) {
			re, err := regexp.Compile(alt)
			if err != nil {
				return "", fmt.Errorf("-%s %q: %v", sel.flag, pattern, err)
			}
			var matched []string
			for _, f := range funcs {
				if strings.HasPrefix(f, sel.prefix) && re.MatchString(f) {
					matched = append(matched, f)
				}
			}
			if len(matched) == 0 {
				return "", fmt.Errorf("-%s %q: %q matches no %s function declared in %s", sel.flag, pattern, alt, sel.prefix, dir)
			}
			how += fmt.Sprintf("; -%s %s matches %s", sel.flag, alt, strings.Join(matched, ", "))
		}
	}
	return how, nil
}

// testFiles reads the _test.go files of a directory that go test builds
// with these -tags (a test behind a build tag the command does not give
// is not run by it): the names of the functions they declare (without a
// receiver), and the flags they declare with package flag
// (flag.Bool("screenshots", ...)).
func testFiles(dir, tags string) (funcs []string, flags map[string]bool, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, nil, err
	}
	ctx := build.Default
	if tags != "" {
		ctx.BuildTags = strings.Split(tags, ",")
	}
	flags = map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if ok, err := ctx.MatchFile(dir, filepath.Base(f)); err != nil || !ok {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
				funcs = append(funcs, fn.Name.Name)
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "flag" {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				flags[strings.Trim(lit.Value, "`\"")] = true
			}
			return true
		})
	}
	return funcs, flags, nil
}

// goTestFlags are the flags of go test and of the test binary that the
// go command knows (the others are a package's own).
var goTestFlags = map[string]bool{
	"run": true, "bench": true, "count": true, "timeout": true, "v": true, "race": true,
	"c": true, "o": true, "tags": true, "cpu": true, "benchtime": true, "benchmem": true,
	"p": true, "parallel": true, "skip": true, "short": true, "failfast": true,
	"json": true, "cover": true, "coverprofile": true, "shuffle": true, "fuzz": true,
	"fuzztime": true, "x": true, "n": true, "vet": true, "mod": true, "trimpath": true,
}

// firstLevel is the part of a -run or -bench pattern before its first
// slash outside brackets and parentheses: the one go test matches against
// the top-level functions.
func firstLevel(pattern string) string {
	return splitOutside(pattern, '/')[0]
}

// topAlternatives are the alternatives of a pattern's top level ("A|B").
func topAlternatives(pattern string) []string {
	return splitOutside(pattern, '|')
}

// splitOutside splits s at sep where it is outside brackets and
// parentheses (and not escaped).
func splitOutside(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// checkGo judges a go test command by the package it names: its tests,
// benchmarks, flags and build tags (testdata/gotests).
func TestCheckGoTestReadsThePackage(t *testing.T) {
	cases := []struct {
		name, command string
		ok            bool
	}{
		{"a test", "go test ./gotests -run TestPostgresBlackhole -v", true},
		{"a renamed test", "go test ./gotests -run TestPostgresBlackholeGone -v", false},
		{"each alternative", "go test ./gotests -run 'TestDependencyFaults|TestPostgresBlackhole'", true},
		{"one alternative gone", "go test ./gotests -run 'TestDependencyFaults|TestSQLiteDiskFull'", false},
		{"a benchmark's first level", "go test -run '^$' -bench 'BenchmarkCallSequence/(pool|writers=2)/(1|8|64)$' ./gotests", true},
		{"a benchmark gone", "go test -run '^$' -bench '^BenchmarkRecordedCalls$' ./gotests", false},
		{"the package's own flag", "go test ./gotests -run TestPostgresBlackhole -screenshots", true},
		{"a flag nobody declares", "go test ./gotests -run TestPostgresBlackhole -screenshot", false},
		{"a test behind a tag not given", "go test ./gotests -run TestOnlyWithTheSlowTag", false},
		{"a test behind a tag given", "go test -tags slow ./gotests -run TestOnlyWithTheSlowTag", true},
		{"no such package", "go test ./nogotests -run TestPostgresBlackhole", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checker := &commandChecker{root: "testdata", built: map[string]string{}}
			words := shellCommands(t, c.command)[0].Words
			how, err := checker.checkGo(words[1:])
			if (err == nil) != c.ok {
				t.Errorf("%s: ok %v (%s; %v), want %v", c.command, err == nil, how, err, c.ok)
			}
		})
	}
}
