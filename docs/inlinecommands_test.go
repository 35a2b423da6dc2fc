package docs

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// inlineToolgate finds the toolgate commands written in the pages' prose
// as code spans (`toolgate runs show RUN`).
var inlineToolgate = regexp.MustCompile("`(toolgate [^`]+)`")

// spanFlag finds the flags a code span uses (--key, --config=F).
var spanFlag = regexp.MustCompile(`(?:^|\s)--([a-z][a-z0-9-]*)`)

// The toolgate commands the README and docs/ name in their prose (code
// spans, which hold placeholders such as NAME, F or R and so cannot run)
// name a command toolgate has and only flags that command takes, as its
// --help lists them. ("toolgate COMMAND" stands for any; "toolgate help"
// is the list itself.)
func TestInlineCommandsNameRealCommandsAndFlags(t *testing.T) {
	helps := map[string]string{} // command words -> its --help
	help := func(words ...string) (string, bool) {
		key := strings.Join(words, " ")
		if h, ok := helps[key]; ok {
			return h, h != ""
		}
		out, err := exec.Command(binary, append(words, "--help")...).CombinedOutput()
		if err != nil {
			out = nil
		}
		helps[key] = string(out)
		return string(out), err == nil
	}
	commands, _ := help()
	spans := 0
	for _, page := range commandPages(t) {
		for i, line := range strings.Split(read(t, page), "\n") {
			for _, m := range inlineToolgate.FindAllStringSubmatch(line, -1) {
				fields := strings.Fields(m[1])
				if len(fields) < 2 || fields[1] == "COMMAND" || fields[1] == "help" {
					continue
				}
				where := fmt.Sprintf("%s:%d", pageName(page), i+1)
				name := fields[1]
				if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(name) + `\s`).MatchString(commands) {
					t.Errorf("%s: `%s` names no toolgate command (toolgate help lists them)", where, m[1])
					continue
				}
				words := []string{name}
				if len(fields) > 2 && strings.Contains(" runs approvals executions sim ", " "+name+" ") && regexp.MustCompile(`^[a-z]+$`).MatchString(fields[2]) {
					words = append(words, fields[2]) // runs list, executions export
				}
				h, ok := help(words...)
				if !ok {
					h, _ = help(name)
				}
				for _, f := range spanFlag.FindAllStringSubmatch(m[1], -1) {
					if f[1] == "help" {
						continue
					}
					if !regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(f[1]) + `\b`).MatchString(h) {
						t.Errorf("%s: `%s`: toolgate %s has no flag --%s", where, m[1], strings.Join(words, " "), f[1])
					}
				}
				spans++
			}
		}
	}
	if spans < 50 {
		t.Fatalf("checked %d code spans; the pages name more toolgate commands: the reading broke", spans)
	}
	t.Logf("%d toolgate commands named in the prose name real commands and flags", spans)
}
