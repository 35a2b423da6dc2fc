package pipeline_test

import (
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// A rule refusal's meta.next agrees with what the rule's message says: the
// rule's next: when it sets one, escalate when it does not.
func TestRuleRefusalAdviceFollowsTheRule(t *testing.T) {
	for _, tc := range []struct {
		name, next string
		want       types.Next
	}{
		{"no next: escalate, as the message says", "", types.NextEscalate},
		{"next: use_other_tool", "use_other_tool", types.NextUseOtherTool},
		{"next: stop", "stop", types.NextStop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, setupOpts{mutate: func(cfg *config.Config) {
				r := &cfg.Tools["issue_refund"].Rules[0]
				r.Message = "Refund of {args.amount_paise} paise exceeds the limit. Escalate to a person instead of retrying."
				r.Next = tc.next
			}})
			res := b.call("issue_refund", refundArgs(800000))
			if res.Code() != "over_limit" || res.Meta.Next != tc.want || res.Meta.SideEffect != types.SideEffectNone {
				t.Fatalf("code %s next %s side_effect %s, want over_limit, %s, none (%s)", res.Code(), res.Meta.Next, res.Meta.SideEffect, tc.want, res.Observation)
			}
		})
	}
}
