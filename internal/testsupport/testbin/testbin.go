// Package testbin gives end-to-end test packages the real toolgate binary:
// built once in TestMain (with the race detector when the tests run with
// it), removed afterwards, and a goleak check once every test passed.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// Race is true when this build has the race detector on.
const Race = raceEnabled

// Main builds cmd/toolgate into a temporary directory, sets *binary to its
// path, runs the tests and exits. Use it as a package's TestMain body.
func Main(m *testing.M, binary *string) {
	dir, err := os.MkdirTemp("", "toolgate-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*binary = filepath.Join(dir, "toolgate")
	args := []string{"build", "-o", *binary}
	if Race {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "github.com/toolgate/toolgate/cmd/toolgate")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building toolgate:", err)
		os.RemoveAll(dir)
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
