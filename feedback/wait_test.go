package feedback

import (
	"testing"
	"time"
)

// Waits are told in human units, rounded up: exact seconds below a
// minute, then about so many minutes, hours or days.
func TestWaitsInHumanUnits(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "1 second"},
		{300 * time.Millisecond, "1 second"},
		{time.Second, "1 second"},
		{12*time.Second + time.Millisecond, "13 seconds"},
		{time.Minute, "60 seconds"},
		{90 * time.Second, "about 2 minutes"},
		{time.Hour, "about 60 minutes"},
		{86393 * time.Second, "about 24 hours"},
		{49 * time.Hour, "about 3 days"},
	}
	for _, c := range cases {
		if got := seconds(c.d); got != c.want {
			t.Errorf("wait %v: %q, want %q", c.d, got, c.want)
		}
	}
}
