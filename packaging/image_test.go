package packaging_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testsupport/refunds"
)

// podmanArgs are the flags this kind of machine needs for containers (a VM
// whose cgroups crun refuses, and whose rlimits a container may not copy);
// PODMAN_FLAGS replaces them.
func podmanArgs() []string {
	if v, ok := os.LookupEnv("PODMAN_FLAGS"); ok {
		return strings.Fields(v)
	}
	return []string{"--runtime", "runc"}
}

func podman(t *testing.T, args ...string) string {
	t.Helper()
	return run(t, ".", "podman", append(podmanArgs(), args...)...)
}

// checkImage builds the image from the snapshot's binary as make snapshot
// does, loads the saved archive, and serves a refunds config from it with
// the store on a named volume: a refund made through it is still in its run
// after the container is stopped and started again.
func checkImage(t *testing.T, dist, bin string) {
	need(t, "podman")
	env := append(os.Environ(), "PODMAN=podman")
	cmd := exec.Command("bash", filepath.Join(root(t), "scripts/build-image.sh"), dist)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build-image.sh: %v\n%s", err, out)
	}
	archive := one(t, dist, "toolgate_*_linux_"+arch+".oci.tar")
	loaded := podman(t, "load", "--quiet", "--input", archive)
	image := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(loaded), "Loaded image:"))
	t.Cleanup(func() { _ = exec.Command("podman", "rmi", "--force", image).Run() })

	var cfg struct {
		Config struct {
			User       string            `json:"User"`
			Entrypoint []string          `json:"Entrypoint"`
			Cmd        []string          `json:"Cmd"`
			Volumes    map[string]any    `json:"Volumes"`
			Labels     map[string]string `json:"Labels"`
		} `json:"Config"`
	}
	var inspected []json.RawMessage
	if err := json.Unmarshal([]byte(podman(t, "image", "inspect", image)), &inspected); err != nil || len(inspected) != 1 {
		t.Fatalf("podman image inspect: %v", err)
	}
	if err := json.Unmarshal(inspected[0], &cfg); err != nil {
		t.Fatal(err)
	}
	if c := cfg.Config; c.User != "65532:65532" || strings.Join(c.Cmd, " ") != "serve --config /etc/toolgate/toolgate.yaml" || c.Volumes["/var/lib/toolgate"] == nil {
		t.Errorf("image config: %+v", c)
	}

	// The payments simulator on the host; the container shares the host's
	// network, so both stay on 127.0.0.1.
	sim := start(t, bin, "sim", "payments", "--listen", "127.0.0.1:0")
	line := sim.wait("payments simulator listening on ")
	simURL := strings.TrimSpace(line[strings.Index(line, "http://"):])
	port := itoa(freePort(t))
	dir := t.TempDir()
	config := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(config, []byte(strings.NewReplacer("PORT", port, "SIM", simURL).Replace(imageConfig)), 0o644); err != nil {
		t.Fatal(err)
	}
	volume := "toolgate-test-" + port
	podman(t, "volume", "create", volume)
	name := "toolgate-test-" + port
	t.Cleanup(func() {
		_ = exec.Command("podman", append(podmanArgs(), "rm", "--force", "--time", "0", name)...).Run()
		_ = exec.Command("podman", "volume", "rm", "--force", volume).Run()
	})
	ctr := start(t, "podman", append(podmanArgs(), "run", "--name", name, "--network", "host",
		"--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096", "-e", "TOOLGATE_KEY=packaging-test-key-0123",
		"-v", config+":/etc/toolgate/toolgate.yaml:ro,Z", "-v", volume+":/var/lib/toolgate", image)...)
	ctr.wait("toolgate listening on ")
	base := "http://127.0.0.1:" + port

	if code, body := call(t, "GET", base+"/healthz", ""); code != 200 || !strings.Contains(body, `"version":"v0.0.1-snapshot.`) {
		t.Fatalf("GET /healthz: %d %s", code, body)
	}
	if code, body := call(t, "POST", base+"/v1/runs", `{"run_id":"r1","principal":{"id":"cust_42","permissions":["refunds:write"]}}`); code != 201 {
		t.Fatalf("POST /v1/runs: %d %s", code, body)
	}
	if code, body := call(t, "POST", base+"/v1/runs/r1/calls", `{"tool":"issue_refund","args":{"order_id":"ORD-4471","amount_paise":1000}}`); code != 200 || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("the refund: %d %s", code, body)
	}

	podman(t, "stop", "--time", "45", name)
	if err := ctr.exited(); err != nil {
		t.Errorf("the container after podman stop: %v", err)
	}
	again := start(t, "podman", append(podmanArgs(), "start", "--attach", name)...)
	again.wait("toolgate listening on ")
	code, body := call(t, "GET", base+"/v1/runs/r1", "")
	if code != 200 || !strings.Contains(body, `"issue_refund"`) {
		t.Errorf("the run after a restart: %d %s", code, body)
	}
	if code, body := call(t, "GET", simURL+"/orders/ORD-4471/refunds", ""); code != 200 || strings.Count(body, `"amount_paise"`) != 1 {
		t.Errorf("the provider's refunds: %d %s", code, body)
	}
	podman(t, "stop", "--time", "45", name)
	_ = again.exited()
}

// call makes one request with the test's key and returns status and body.
func call(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer packaging-test-key-0123")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// imageConfig is served from the image: PORT and SIM are filled in. It is
// the refunds fixture's issue_refund alone, keyed per principal.
var imageConfig = refunds.Config("SIM",
	refunds.Add("", `listen: 127.0.0.1:PORT
store: sqlite:/var/lib/toolgate/toolgate.db
auth:
  keys:
    - name: agents
      key: ${TOOLGATE_KEY}
`),
	refunds.Delete("tools.get_order", "tools.list_refunds", "tools.issue_refund.input_schema.properties.reason",
		"tools.issue_refund.input_schema.properties.order_id.pattern", "tools.issue_refund.rules", "tools.issue_refund.owner",
		"tools.issue_refund.verify", "tools.issue_refund.state"),
	refunds.Set("tools.issue_refund.idempotency", `{key: "refund:{order_id}:{amount_paise}:{principal.id}"}`))
