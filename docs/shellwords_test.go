package docs

import (
	"reflect"
	"strings"
	"testing"
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

// shellCommands splits a shell text into its simple commands, enough for
// the commands the documentation prints: a backslash at the end of a line
// continues it; '#' at the start of a word begins a comment; &&, ||, |, ;
// and & end a command; redirections (> file, 2>&1, <<END and the here
// document's body) are dropped; single and double quotes group a word.
func shellCommands(text string) []simpleCommand {
	lines := strings.Split(text, "\n")
	var out []simpleCommand
	for i := 0; i < len(lines); i++ {
		start := i
		line := lines[i]
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + lines[i]
		}
		cmds, heredoc := splitLine(line)
		for _, words := range cmds {
			if len(words) > 0 {
				out = append(out, simpleCommand{Line: start + 1, Words: words})
			}
		}
		if heredoc != "" {
			for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != heredoc {
				i++
			}
			i++ // the terminator
		}
	}
	return out
}

// splitLine splits one logical line into the words of its commands, and
// returns the terminator of a here document it starts, if any.
func splitLine(line string) (cmds [][]string, heredoc string) {
	var (
		words   []string
		word    strings.Builder
		inWord  bool
		skipOne bool // the next word is a redirection's target
	)
	endWord := func() {
		if !inWord {
			return
		}
		w := word.String()
		word.Reset()
		inWord = false
		if skipOne {
			skipOne = false
			if heredoc == "<<" {
				heredoc = strings.Trim(w, `'"`)
			}
			return
		}
		words = append(words, w)
	}
	endCommand := func() {
		endWord()
		cmds = append(cmds, words)
		words = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				end = len(line) - i - 1
			}
			word.WriteString(line[i+1 : i+1+end])
			inWord = true
			i += end + 1
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' && j+1 < len(line) {
					j++
				}
				word.WriteByte(line[j])
			}
			inWord = true
			i = j
		case c == '\\' && i+1 < len(line):
			word.WriteByte(line[i+1])
			inWord = true
			i++
		case c == '#' && !inWord:
			endCommand()
			return cmds, heredoc
		case c == ' ' || c == '\t':
			endWord()
		case c == ';' || c == '|' || c == '&':
			endCommand()
			if i+1 < len(line) && (line[i+1] == c) {
				i++ // && or ||
			}
		case c == '>' || c == '<':
			if isDigits(word.String()) {
				word.Reset() // 2> file: the 2 is the redirection's
				inWord = false
			}
			endWord()
			op := string(c)
			for i+1 < len(line) && (line[i+1] == '>' || line[i+1] == '<' || line[i+1] == '-') {
				i++
				op += string(line[i])
			}
			if i+1 < len(line) && line[i+1] == '&' {
				i++ // >&2, 2>&1: no word to skip
				for i+1 < len(line) && line[i+1] >= '0' && line[i+1] <= '9' {
					i++
				}
				continue
			}
			if strings.HasPrefix(op, "<<") {
				heredoc = "<<"
			}
			skipOne = true
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCommand()
	return cmds, heredoc
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
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
		{"glued quotes", `curl --json '{"id": "ORD-'$i'"}' "a b"c` + "\n",
			[]simpleCommand{{1, []string{"curl", "--json", `{"id": "ORD-$i"}`, "a bc"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := shellCommands(c.text); !reflect.DeepEqual(got, c.want) {
				t.Errorf("shellCommands(%q)\n got %v\nwant %v", c.text, got, c.want)
			}
		})
	}
}
