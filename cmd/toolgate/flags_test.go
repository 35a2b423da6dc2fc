package main

import (
	"errors"
	"flag"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// parse accepts flags before, between and after positional arguments, and
// "--" ends the flags.
func TestParseFlagsAnywhere(t *testing.T) {
	cases := []struct {
		name        string
		args        []string
		pos         []string
		by, comment string
		json, usage bool
	}{
		{"flags first", []string{"--by", "alice", "approve", "apr_1"}, []string{"approve", "apr_1"}, "alice", "", false, false},
		{"flags between", []string{"approve", "--by", "alice", "apr_1"}, []string{"approve", "apr_1"}, "alice", "", false, false},
		{"flags last", []string{"approve", "apr_1", "--by", "alice", "--json"}, []string{"approve", "apr_1"}, "alice", "", true, false},
		{"flag=value", []string{"approve", "apr_1", "--by=alice"}, []string{"approve", "apr_1"}, "alice", "", false, false},
		{"-- ends the flags", []string{"approve", "--", "--by", "alice"}, []string{"approve", "--by", "alice"}, "", "", false, false},
		{"-- after a bool flag ends them", []string{"--json", "--", "-x"}, []string{"-x"}, "", "", true, false},
		{"-- as a flag's value", []string{"--comment", "--", "apr_1", "--by", "bob"}, []string{"apr_1"}, "bob", "--", false, false},
		{"a lone dash is positional", []string{"a", "-", "b"}, []string{"a", "-", "b"}, "", "", false, false},
		{"an unknown flag after a positional", []string{"approve", "apr_1", "--nope"}, nil, "", "", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			by := fs.String("by", "", "")
			comment := fs.String("comment", "", "")
			asJSON := fs.Bool("json", false, "")
			pos, err := positional(fs, c.args)
			if c.usage {
				if !errors.Is(err, errUsage) {
					t.Fatalf("%q: err %v, want a usage error", c.args, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", c.args, err)
			}
			if !slices.Equal(pos, c.pos) || *by != c.by || *comment != c.comment || *asJSON != c.json {
				t.Errorf("%q: positional %q, --by %q, --comment %q, --json %v; want %q, %q, %q, %v",
					c.args, pos, *by, *comment, *asJSON, c.pos, c.by, c.comment, c.json)
			}
		})
	}
}

// Every command takes its flags before or after its positional
// arguments: the two orders of each row fail alike, on the flag given
// last (a config file that does not exist), and a mistyped flag after the
// positional arguments is a usage error, not ignored. A command added to
// the table needs its row here.
func TestEveryCommandTakesFlagsAnywhere(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dir", "flags.yaml")
	rows := map[string]struct {
		first, second []string
		code          int
		want          string
	}{
		"approvals":  {[]string{"approve", "--by", "alice", "--config", missing, "apr_1"}, []string{"approve", "apr_1", "--by", "alice", "--config", missing}, 1, missing},
		"call":       {[]string{"--config", missing, "--tool", "get_order", "--run", "r1"}, []string{"--tool", "get_order", "--run", "r1", "--config", missing}, 1, missing},
		"check":      {[]string{"--config", missing}, []string{"--offline", "--config", missing}, 1, missing},
		"demo":       {[]string{"--speed", "0", "--json"}, []string{"--json", "--speed", "0"}, 2, "--speed must be positive"},
		"executions": {[]string{"--format", "csv", "--config", missing, "export"}, []string{"export", "--format", "csv", "--config", missing}, 1, missing},
		"mcp":        {[]string{"--config", missing}, []string{"--run", "r1", "--config", missing}, 1, missing},
		"prune":      {[]string{"--config", missing, "--older-than", "1h"}, []string{"--older-than", "1h", "--config", missing}, 1, missing},
		"reconcile":  {[]string{"--config", missing}, []string{"--config", missing}, 1, missing},
		"replay":     {[]string{"--config", missing, "r1"}, []string{"r1", "--config", missing}, 1, missing},
		"runs":       {[]string{"--config", missing, "show", "r1"}, []string{"show", "r1", "--config", missing}, 1, missing},
		"serve":      {[]string{"--config", missing}, []string{"--config", missing}, 1, missing},
		"sim":        {[]string{"payments", "--orders", "bad", "--listen", "127.0.0.1:0"}, []string{"payments", "--listen", "127.0.0.1:0", "--orders", "bad"}, 2, `--orders "bad"`},
		"stats":      {[]string{"--config", missing, "--json"}, []string{"--json", "--config", missing}, 1, missing},
		"tools":      {[]string{"--config", missing, "--format", "openai"}, []string{"--format", "openai", "--config", missing}, 1, missing},
		"whatif":     {[]string{"--config", missing, "--run", "r1"}, []string{"--run", "r1", "--config", missing}, 1, missing},
	}
	// positionals are the arguments each command takes before a flag.
	positionals := map[string][]string{"approvals": {"approve", "apr_1"}, "executions": {"export"},
		"replay": {"r1"}, "runs": {"show", "r1"}, "sim": {"payments"}}
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			row, ok := rows[c.name]
			if !ok {
				t.Fatalf("no row for the command %q: add one to this test", c.name)
			}
			for _, args := range [][]string{row.first, row.second} {
				code, out, errOut := runCLI(t, append([]string{c.name}, args...)...)
				if code != row.code || !strings.Contains(out+errOut, row.want) {
					t.Errorf("toolgate %s %s: exit %d, want %d with %q:\n%s%s", c.name, strings.Join(args, " "), code, row.code, row.want, out, errOut)
				}
			}
			args := append(append([]string{c.name}, positionals[c.name]...), "--no-such-flag")
			code, _, errOut := runCLI(t, args...)
			if code != 2 || !strings.Contains(errOut, "-no-such-flag") {
				t.Errorf("toolgate %s: exit %d, want 2 naming the flag:\n%s", strings.Join(args, " "), code, errOut)
			}
		})
	}
}
