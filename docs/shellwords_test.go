package docs

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// simpleCommand is one command of a shell text, as the shell would split
// it: its words with quotes removed, without its redirections, and the
// line it starts on.
type simpleCommand struct {
	// Line is the 1-based line of the text the command starts on.
	Line int
	// Words are the command's words; $VAR and globs are left as written.
	Words []string
}

// shellCommands splits a shell text into its simple commands, as the shell
// parses it (mvdan.cc/sh): continuation lines, comments, &&, ||, |, ; and &,
// redirections and here documents (dropped), quotes (removed). A $VAR or a
// $(command) is left as written. A text the shell cannot parse fails t.
func shellCommands(t testing.TB, text string) []simpleCommand {
	t.Helper()
	f, err := syntax.NewParser().Parse(strings.NewReader(text), "")
	if err != nil {
		t.Fatalf("not a shell text: %v\n%s", err, text)
	}
	asWritten := &expand.Config{
		Env: expand.FuncEnviron(func(name string) string { return "$" + name }),
		CmdSubst: func(w io.Writer, cs *syntax.CmdSubst) error {
			return syntax.NewPrinter().Print(w, cs)
		},
	}
	var out []simpleCommand
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		c := simpleCommand{Line: int(call.Pos().Line())}
		for _, w := range call.Args {
			lit, err := expand.Literal(asWritten, w)
			if err != nil {
				t.Fatalf("line %d: %v", c.Line, err)
			}
			c.Words = append(c.Words, lit)
		}
		out = append(out, c)
		return true
	})
	return out
}

// shellCommands splits the shapes of command the documentation prints.
func TestShellCommandsSplitsDocumentedShapes(t *testing.T) {
	cases := []struct {
		name string
		text string
		want []simpleCommand
	}{
		{"comment", "toolgate check --config toolgate.yaml     # exit 0: ok\n",
			[]simpleCommand{{1, []string{"toolgate", "check", "--config", "toolgate.yaml"}}}},
		{"background with redirections", "toolgate sim payments --slow 7s > bank.log 2>&1 &\ncurl -s http://127.0.0.1:8470/healthz\n",
			[]simpleCommand{{1, []string{"toolgate", "sim", "payments", "--slow", "7s"}}, {2, []string{"curl", "-s", "http://127.0.0.1:8470/healthz"}}}},
		{"continuation and quotes", "curl -s --json '{\"a\": 1}' \\\n  http://127.0.0.1:8470/v1/runs > /dev/null\n",
			[]simpleCommand{{1, []string{"curl", "-s", "--json", `{"a": 1}`, "http://127.0.0.1:8470/v1/runs"}}}},
		{"and, pipe, semicolon", "cd bench && go build -o /tmp/x . | jq '.a'; wait\n",
			[]simpleCommand{{1, []string{"cd", "bench"}}, {1, []string{"go", "build", "-o", "/tmp/x", "."}}, {1, []string{"jq", ".a"}}, {1, []string{"wait"}}}},
		{"here document", "cat > /tmp/gh.yaml <<END\nstore: memory\nEND\n/tmp/tg check --config /tmp/gh.yaml\n",
			[]simpleCommand{{1, []string{"cat"}}, {4, []string{"/tmp/tg", "check", "--config", "/tmp/gh.yaml"}}}},
		{"assignments and a loop", "export K=v\nANTHROPIC_API_KEY=... go run ./examples/agent\nfor i in 1 2; do curl -s http://x/$i; done\n",
			[]simpleCommand{{2, []string{"go", "run", "./examples/agent"}}, {3, []string{"curl", "-s", "http://x/$i"}}}},
		{"glued quotes", `curl --json '{"id": "ORD-'$i'"}' "a b"c` + "\n",
			[]simpleCommand{{1, []string{"curl", "--json", `{"id": "ORD-$i"}`, "a bc"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := shellCommands(t, c.text); !reflect.DeepEqual(got, c.want) {
				t.Errorf("shellCommands(%q)\n got %v\nwant %v", c.text, got, c.want)
			}
		})
	}
}
