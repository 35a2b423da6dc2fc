package packaging_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// snapshot builds the release of this checkout for linux on this machine's
// architecture, from the real .goreleaser.yaml narrowed to that one target,
// into a temporary dist directory. A config whose targets moved fails the
// narrowing, so the test keeps up with it.
func snapshot(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the release build takes minutes")
	}
	need(t, "git")
	top := root(t)
	b, err := os.ReadFile(filepath.Join(top, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	for _, r := range [][2]string{
		{"    goos: [linux, darwin]\n", "    goos: [linux]\n"},
		{"    goarch: [amd64, arm64]\n", "    goarch: [" + arch + "]\n"},
		{"version: 2\n", "version: 2\ndist: " + filepath.Join(t.TempDir(), "dist") + "\n"},
	} {
		if !strings.Contains(cfg, r[0]) {
			t.Fatalf(".goreleaser.yaml has no line %q: update the narrowing in this test", strings.TrimSpace(r[0]))
		}
		cfg = strings.Replace(cfg, r[0], r[1], 1)
	}
	dist := cfg[strings.Index(cfg, "dist: ")+6:]
	dist = dist[:strings.Index(dist, "\n")]
	path := filepath.Join(t.TempDir(), "goreleaser.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", makeVar(t, "GORELEASER"), "release", "--snapshot", "--clean", "--config", path)
	cmd.Dir = top
	cmd.Env = append(os.Environ(), "TOOLGATE_COMMIT="+strings.TrimSpace(run(t, top, "git", "rev-parse", "HEAD")))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("goreleaser release --snapshot: %v\n%s", err, out)
	}
	return dist
}

// one is the one file of dir matching pattern.
func one(t *testing.T, dir, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(m) != 1 {
		t.Fatalf("%s in %s: %v %v", pattern, dir, m, err)
	}
	return m[0]
}

func TestSnapshotRelease(t *testing.T) {
	dist := snapshot(t)
	head := strings.TrimSpace(run(t, root(t), "git", "rev-parse", "HEAD"))

	var bin string
	dir := t.TempDir() // the archive's files, kept for the subtests after it
	t.Run("archive", func(t *testing.T) {
		archive := one(t, dist, "toolgate_*_linux_"+arch+".tar.gz")
		sums, err := os.ReadFile(filepath.Join(dist, "checksums.txt"))
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(archive)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if want := hex.EncodeToString(sum[:]) + "  " + filepath.Base(archive); !strings.Contains(string(sums), want) {
			t.Errorf("checksums.txt lacks %q:\n%s", want, sums)
		}
		run(t, dir, "tar", "-xzf", archive)
		for _, f := range []string{"README.md", "CHANGELOG.md", "docs/deploy.md", "docs/upgrade.md"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("the archive lacks %s", f)
			}
		}
		bin = filepath.Join(dir, "toolgate")
		out := run(t, dir, bin, "version")
		for _, want := range []string{"toolgate v0.0.1-snapshot.", "commit   " + head + "\n", "built    20", "go       go1."} {
			if !strings.Contains(out, want) {
				t.Errorf("toolgate version lacks %q:\n%s", want, out)
			}
		}
		if out2 := run(t, dir, bin, "--version"); out2 != out {
			t.Errorf("--version %q differs from version %q", out2, out)
		}
	})
	if bin == "" {
		t.Fatal("no binary from the archive")
	}
	t.Run("deb", func(t *testing.T) { checkDeb(t, one(t, dist, "toolgate_*_"+arch+".deb"), bin) })
	t.Run("image", func(t *testing.T) { checkImage(t, dist, bin) })
}
