package execute

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestKindString(t *testing.T) {
	tests := []struct {
		kind Kind
		want string
	}{
		{KindConnectRefused, "connect_refused"},
		{KindConnectTimeout, "connect_timeout"},
		{KindConnectFailed, "connect_failed"},
		{KindReadTimeout, "read_timeout"},
		{KindReset, "reset"},
		{KindStatus, "status"},
		{KindCanceled, "canceled"},
		{KindPanic, "panic"},
		{KindFuncError, "func_error"},
		{KindTooLarge, "too_large"},
		{KindInvalidRequest, "invalid_request"},
		{Kind(0), "unknown"},
	}
	for _, tt := range tests {
		if got := tt.kind.String(); got != tt.want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(tt.kind), got, tt.want)
		}
	}
	b, _ := json.Marshal(map[string]Kind{"kind": KindReset})
	if string(b) != `{"kind":"reset"}` {
		t.Errorf("JSON = %s", b)
	}
}

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		value string
		want  time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{" 120 ", 2 * time.Minute},
		{"0", 0},
		{"-5", 0},
		{"99999999999999999", 24 * time.Hour},
		{epoch.Add(42 * time.Second).Format(http.TimeFormat), 42 * time.Second},
		{epoch.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"Sunday, 01-Mar-26 12:00:30 GMT", 30 * time.Second}, // RFC 850
		{"soon", 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.value, epoch); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.value, got, tt.want)
		}
	}
}

func TestBodyData(t *testing.T) {
	tests := []struct {
		body, want string
	}{
		{"", "null"},
		{"  \n", "null"},
		{`{"a":1}`, `{"a":1}`},
		{" 42 ", "42"},
		{"plain text", `"plain text"`},
		{"<b>tag</b>", `"<b>tag</b>"`},
		{"\xff\xfe", `"\ufffd\ufffd"`},
	}
	for _, tt := range tests {
		if got := string(bodyData([]byte(tt.body))); got != tt.want {
			t.Errorf("bodyData(%q) = %s, want %s", tt.body, got, tt.want)
		}
	}
}

func TestShortBody(t *testing.T) {
	long := strings.Repeat("é", 250)
	tests := []struct {
		data, want string
	}{
		{`null`, ""},
		{`"  two\n lines  "`, "two lines"},
		{`{"message":"amount too large"}`, "amount too large"},
		{`{"error":"invalid_grant","error_description":"token expired"}`, "token expired"},
		{`{"error":{"code":7,"message":"nested"}}`, "nested"},
		{`{"code":7}`, `{"code":7}`},
		{`[1,2]`, `[1,2]`},
		{`"` + long + `"`, strings.Repeat("é", 200) + "…"},
	}
	for _, tt := range tests {
		if got := shortBody(json.RawMessage(tt.data)); got != tt.want {
			t.Errorf("shortBody(%s) = %q, want %q", tt.data, got, tt.want)
		}
	}
}

func TestFailureHelpers(t *testing.T) {
	tests := []struct {
		name      string
		failure   Failure
		unhealthy bool
	}{
		{"transient counts", Failure{Kind: KindReadTimeout, Transient: true, Delivered: true}, true},
		{"429 counts", Failure{Kind: KindStatus, Status: 429, Transient: true}, true},
		{"panic counts", Failure{Kind: KindPanic, Delivered: true}, true},
		{"4xx ignored", Failure{Kind: KindStatus, Status: 404, Delivered: true}, false},
		{"cancel ignored", Failure{Kind: KindCanceled, Delivered: true}, false},
		{"bad request ignored", Failure{Kind: KindInvalidRequest}, false},
		{"tls certificate ignored", Failure{Kind: KindConnectFailed}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.failure.Unhealthy(); got != tt.unhealthy {
				t.Errorf("Unhealthy = %v, want %v", got, tt.unhealthy)
			}
		})
	}

	f := &Failure{Kind: KindStatus, Transient: true, Status: 503, RetryAfter: 9 * time.Second, Err: errors.New("x")}
	if f.Error() != "status: x" || f.Unwrap().Error() != "x" {
		t.Errorf("Error/Unwrap = %q / %v", f.Error(), f.Unwrap())
	}
	if (&Failure{Kind: KindReset}).Error() != "reset" {
		t.Error("Error of a bare failure")
	}
}

func TestBodyDataDepth(t *testing.T) {
	deep := strings.Repeat(`{"a":[`, 51) + "1" + strings.Repeat(`]}`, 51) // 102 levels
	tests := []struct {
		name, body string
		depth      int
		asText     bool
	}{
		{"flat", `{"a":1}`, 0, false},
		{"brackets in strings do not count", `{"a":"[[[[{{{{\"]]"}`, 0, false},
		{"at the limit", strings.Repeat("[", MaxDataDepth) + strings.Repeat("]", MaxDataDepth), 0, false},
		{"past the limit", deep, 102, true},
		{"not JSON", `[[[`, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, depth := bodyDataDepth([]byte(tt.body))
			var text string
			isText := json.Unmarshal(data, &text) == nil
			if depth != tt.depth || isText != tt.asText || isText && text != tt.body {
				t.Fatalf("depth %d, as text %v (%s); want %d, %v", depth, isText, data, tt.depth, tt.asText)
			}
		})
	}
}
