package config_test

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
)

// public_url is an absolute http(s) URL with a host and no query.
func TestPublicURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value string
		want  string // in the problem; "" for none
	}{
		{"https://tools.example.com", ""},
		{"http://127.0.0.1:8470/gw/", ""},
		{"tools.example.com", "not an absolute http:// or https:// URL"},
		{"ftp://tools.example.com", "not an absolute http:// or https:// URL"},
		{"https://tools.example.com/?x=1", "a user, a query or a fragment"},
		{"https://user@tools.example.com", "a user, a query or a fragment"},
	}
	for _, tt := range tests {
		_, err := config.Parse([]byte("store: memory\npublic_url: \""+tt.value+"\"\n"), "", nil)
		got := ""
		if err != nil && strings.Contains(err.Error(), "public_url") {
			got = err.Error()
		}
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("public_url %q: %v, want %q", tt.value, err, tt.want)
		}
	}
}
