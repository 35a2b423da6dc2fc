package validate

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

func TestRuleNext(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rule    config.Rule
		want    types.Next
		problem string // part of the problem, "" for none
	}{
		{"default", config.Rule{Deny: "true", Message: "Escalate."}, types.NextEscalate, ""},
		{"use_other_tool", config.Rule{Deny: "true", Next: "use_other_tool"}, types.NextUseOtherTool, ""},
		{"fix_args", config.Rule{Deny: "true", Next: "fix_args"}, types.NextFixArgs, ""},
		{"retry is no advice for a refusal", config.Rule{Deny: "true", Next: "retry"}, types.NextEscalate, `"retry" is not advice`},
		{"unknown", config.Rule{Deny: "true", Next: "ask_nicely"}, types.NextEscalate, "use one of escalate, use_other_tool"},
		{"approval rules answer wait", config.Rule{Deny: "true", Approval: true, Next: "stop"}, "", "does not apply to an approval rule"},
		{"approval without next", config.Rule{Deny: "true", Approval: true}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := ruleNext("rules[0]", tc.rule)
			if got != tc.want {
				t.Errorf("next %q, want %q", got, tc.want)
			}
			switch {
			case tc.problem == "" && len(problems) > 0:
				t.Errorf("problem %q, want none", problems[0].text)
			case tc.problem != "" && (len(problems) != 1 || problems[0].key != "rules[0].next" || !strings.Contains(problems[0].text, tc.problem)):
				t.Errorf("problems %v, want one on rules[0].next saying %q", problems, tc.problem)
			}
		})
	}
}
