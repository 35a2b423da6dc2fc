package types

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestData(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"json object passes through", `{"a":9007199254740993}`, `{"a":9007199254740993}`},
		{"empty body is null", ``, `null`},
		{"bare string is quoted", `refund created`, `"refund created"`},
		{"html is quoted", `<h1>502</h1>`, `"\u003ch1\u003e502\u003c/h1\u003e"`},
		{"binary is described", "\xff\xfe\x00", `"\u003c3 bytes of binary data\u003e"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Data([]byte(tt.body))
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("not valid JSON: %s", got)
			}
		})
	}
}

func TestPanicHidesDetails(t *testing.T) {
	r := Panic("secret token abc123 at main.go:42", Meta{Tool: "t"})
	if r.OK || r.Error.Code != CodeInternalError {
		t.Fatalf("want internal_error, got %+v", r)
	}
	if strings.Contains(r.Error.Message, "abc123") || strings.Contains(r.Error.Message, "main.go") {
		t.Errorf("panic value leaked into the message: %q", r.Error.Message)
	}
	b, err := json.Marshal(r)
	if err != nil || !json.Valid(b) {
		t.Fatalf("envelope does not encode: %v", err)
	}
}
