package types

import "testing"

func TestOutOfSteps(t *testing.T) {
	for _, c := range []struct {
		step, max int64
		out       bool
	}{
		{0, 0, false}, {99, 0, false}, // no bound
		{2, 3, false}, {3, 3, true}, {4, 3, true},
	} {
		if got := (&Run{Step: c.step, MaxSteps: c.max}).OutOfSteps(); got != c.out {
			t.Errorf("step %d of max %d: OutOfSteps %v, want %v", c.step, c.max, got, c.out)
		}
	}
}
