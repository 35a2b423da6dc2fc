package expr

import "testing"

func TestUses(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		src   string
		state bool
		args  bool
	}{
		{"args.amount_paise > 500000", false, true},
		{"(has(state.refunded_paise) ? state.refunded_paise : 0) + args.amount_paise > 500000", true, true},
		{"state.?refunded.orValue(0) > 1", true, false},
		// A shadowing comprehension variable counts: the safe side.
		{"[1, 2].exists(state, state > 1)", true, false},
		{"principal.id == 'x'", false, false},
		{"size(state) > 0 || args.x == 1", true, true},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			p, err := env.Compile(c.src)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Uses("state"); got != c.state {
				t.Errorf("Uses(state) = %v, want %v", got, c.state)
			}
			if got := p.Uses("args"); got != c.args {
				t.Errorf("Uses(args) = %v, want %v", got, c.args)
			}
		})
	}
	var nilProgram *Program
	if nilProgram.Uses("state") {
		t.Error("a nil program uses nothing")
	}
}
