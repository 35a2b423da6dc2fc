package mcpcall_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// serverBinary is the mcptest fixture's stdio command, built once.
var serverBinary string

// TestMain builds the stdio test server, runs the tests, and fails them if
// any goroutine (a session's loops, a watcher, a refresh) is still running.
func TestMain(m *testing.M) {
	if mode := os.Getenv(hostileEnv); mode != "" {
		os.Exit(hostileMain(mode)) // started by a test as a hostile stdio server
	}
	dir, err := os.MkdirTemp("", "mcptestserver-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBinary = filepath.Join(dir, "mcptestserver")
	build := exec.Command("go", "build", "-o", serverBinary, "github.com/toolgate/toolgate/internal/testsupport/mcptest/mcptestserver")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building mcptestserver:", err)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}
