package jsontext

import (
	"encoding/json"
	"strings"
	"testing"
)

// numberCases are held to json.Valid; want is NumberLen's answer.
var numberCases = []struct {
	s    string
	want int
}{
	{"0", 1}, {"-0", 2}, {"7", 1}, {"123", 3}, {"-123", 4}, {"1.5", 3}, {"0.001", 5}, {"1e9", 3}, {"1E+9", 4},
	{"1e-9", 4}, {"-1.25e-10", 9}, {"01", 1}, {"00", 1}, {"1x", 1}, {"1,", 1}, {"", -1}, {"-", -1}, {"+1", -1},
	{".5", -1}, {"1.", -1}, {"1.e3", -1}, {"1e", -1}, {"1e+", -1}, {"-a", -1}, {"Infinity", -1}, {"NaN", -1},
	{"0x10", 1}, {"1_000", 1}, {" 1", -1},
}

// TestNumberLen checks the grammar's table, and that a whole-string
// answer is exactly json.Valid's.
func TestNumberLen(t *testing.T) {
	for _, tc := range numberCases {
		if got := NumberLen(tc.s); got != tc.want {
			t.Errorf("NumberLen(%q) = %d, want %d", tc.s, got, tc.want)
		}
		if got := NumberLen([]byte(tc.s)); got != tc.want {
			t.Errorf("NumberLen([]byte(%q)) = %d, want %d", tc.s, got, tc.want)
		}
		checkNumber(t, tc.s)
	}
}

// checkNumber holds NumberLen to json.Valid: a string that starts like a
// number and has no whitespace around it is a valid number exactly when
// json.Valid accepts it, and the prefix NumberLen takes is always one.
func checkNumber(t testing.TB, s string) {
	t.Helper()
	n := NumberLen(s)
	if n >= 0 && !json.Valid([]byte(s[:n])) {
		t.Fatalf("NumberLen(%q) = %d, but json.Valid refuses %q", s, n, s[:n])
	}
	looksNumeric := s != "" && (s[0] == '-' || isDigit(s[0])) && strings.TrimRight(s, " \t\r\n") == s
	if looksNumeric && ValidNumber(s) != json.Valid([]byte(s)) {
		t.Fatalf("ValidNumber(%q) = %v, json.Valid %v", s, ValidNumber(s), json.Valid([]byte(s)))
	}
	if !looksNumeric && ValidNumber(s) {
		t.Fatalf("ValidNumber(%q) accepted what does not start like a number", s)
	}
}

// FuzzNumberLen holds NumberLen and ValidNumber to json.Valid.
func FuzzNumberLen(f *testing.F) {
	for _, tc := range numberCases {
		f.Add(tc.s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkNumber(t, s) })
}
