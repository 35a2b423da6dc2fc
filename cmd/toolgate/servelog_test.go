package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An access log that cannot be opened stops serve with the reason; with a
// bad --log-format, the file is not even created.
func TestServeAccessLogMistakes(t *testing.T) {
	cfg, _ := cliSetup(t)
	dir := t.TempDir()
	code, _, errOut := runCLI(t, "serve", "--config", cfg, "--access-log", filepath.Join(dir, "missing", "access.log"))
	if code != 1 || !strings.Contains(errOut, "access log:") {
		t.Fatalf("unopenable access log: exit %d\n%s", code, errOut)
	}
	path := filepath.Join(dir, "access.log")
	code, _, errOut = runCLI(t, "serve", "--config", cfg, "--log-format", "xml", "--access-log", path)
	if code != 2 || !strings.Contains(errOut, "--log-format") {
		t.Fatalf("bad format: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the access log was created before the flags were checked (%v)", err)
	}
}
