package validate

import (
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// RuleNexts are the values a deny rule's next: may take. The others do not
// fit a refusal that repeats for the same call: retry and wait would send
// the model back to the same refusal, verify has no read to name.
var RuleNexts = []types.Next{types.NextEscalate, types.NextUseOtherTool, types.NextFixArgs, types.NextStop, types.NextContinue}

// DefaultRuleNext is the advice of a deny rule that sets no next:. A rule
// is a business limit the model cannot argue with: a person decides.
const DefaultRuleNext = types.NextEscalate

// nextProblem is a problem with a rule's next:, keyed for compileTool.
type nextProblem struct{ key, text string }

// ruleNext checks and resolves a rule's next: (key is "rules[i]").
func ruleNext(key string, r config.Rule) (types.Next, []nextProblem) {
	if r.Approval {
		if r.Next != "" {
			return "", []nextProblem{{key + ".next", "does not apply to an approval rule: its refusal always answers wait (and stop once denied); remove it"}}
		}
		return "", nil
	}
	if r.Next == "" {
		return DefaultRuleNext, nil
	}
	for _, n := range RuleNexts {
		if types.Next(r.Next) == n {
			return n, nil
		}
	}
	names := make([]string, len(RuleNexts))
	for i, n := range RuleNexts {
		names[i] = string(n)
	}
	return DefaultRuleNext, []nextProblem{{key + ".next", fmt.Sprintf("%q is not advice a rule refusal can give: use one of %s", r.Next, strings.Join(names, ", "))}}
}
