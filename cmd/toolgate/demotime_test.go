package main

import "testing"

// The demo announces the time it was measured to take (47.8 s at speed
// 1), scaled by --speed.
func TestDemoAnnouncesItsMeasuredTime(t *testing.T) {
	for speed, want := range map[float64]string{1: "48 s", 10: "4.8 s", 2: "24 s"} {
		if got := demoTime(speed); got != want {
			t.Errorf("speed %v: %q, want %q", speed, got, want)
		}
	}
}
