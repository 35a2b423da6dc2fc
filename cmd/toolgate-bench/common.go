package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/bench/serveproc"
)

// toolgateBinary returns the toolgate binary to measure: path when given,
// else a fresh `go build` of ./cmd/toolgate in a temporary directory,
// removed by the returned cleanup.
func toolgateBinary(ctx context.Context, path string) (string, func(), error) {
	if path != "" {
		return path, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "toolgate-bench-bin-")
	if err != nil {
		return "", nil, err
	}
	bin, err := serveproc.Build(ctx, dir, false)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// moduleRoot is the directory of the go.mod of the working directory.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("%w: run toolgate-bench from inside the toolgate module", errUsage)
	}
	return filepath.Dir(mod), nil
}

// writeJSON writes v, indented, to path.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// intList parses "1,32".
func intList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%w: %q is not a list of positive numbers", errUsage, s)
		}
		out = append(out, n)
	}
	return out, nil
}
