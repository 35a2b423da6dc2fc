package validate

import "testing"

// TestValidNumberText: a string argument is suggested as a number only
// when its text is a JSON number, so the advice never names ".5", "1." or
// "+1", which a JSON decoder refuses.
func TestValidNumberText(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"12", true},
		{" 3.5 ", true},
		{"-0.25e3", true},
		{".5", false},
		{"1.", false},
		{"+1", false},
		{"0x10", false},
		{"1_000", false},
		{"NaN", false},
		{"Inf", false},
		{"", false},
		{"012", false},
	}
	for _, tt := range tests {
		if got := validNumberText(tt.in); got != tt.want {
			t.Errorf("validNumberText(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
