package server

import "testing"

func TestLoopbackHost(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"127.0.0.1:8470", true}, {"127.0.0.1", true}, {"127.5.6.7:1", true}, {"[::1]:8470", true}, {"[::1]", true},
		{"localhost:8470", true}, {"LOCALHOST", true}, {"app.localhost:1", true}, {"localhost.", true},
		{"evil.example:8470", false}, {"localhost.evil.example", false}, {"10.0.0.1:8470", false},
		{"0.0.0.0:8470", false}, {"", false}, {"127.0.0.1.nip.io", false}, {"[::ffff:8.8.8.8]:1", false},
	}
	for _, tt := range tests {
		if got := loopbackHost(tt.host); got != tt.want {
			t.Errorf("loopbackHost(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}
