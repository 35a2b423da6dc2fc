package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testsupport/refunds"
)

// Commands that use no secret run with the config's ${VARS} unset; a
// command that calls a dependency still names the variable it lacks.
func TestReadOnlyCommandsNeedNoSecrets(t *testing.T) {
	for _, name := range []string{"TOOLGATE_TEST_UNSET_TOKEN", "TOOLGATE_TEST_UNSET_KEY"} {
		if _, set := os.LookupEnv(name); set {
			t.Skipf("%s is set in the environment", name)
		}
	}
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	yaml := refunds.Config("http://127.0.0.1:9", append(cliOptions,
		refunds.Set("dependencies.payments.headers", `{Authorization: "Bearer ${TOOLGATE_TEST_UNSET_TOKEN}"}`),
		refunds.Set("auth.keys", `[{name: agent, key: "${TOOLGATE_TEST_UNSET_KEY}"}]`))...)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "list"}, "No runs."},
		{[]string{"approvals", "list"}, "No pending approvals."},
		{[]string{"stats"}, ""},
		{[]string{"whatif", "--since", "1h"}, "0 recorded calls judged"},
	} {
		code, out, errOut := runCLI(t, append(c.args, "--config", path)...)
		if code != 0 || !strings.Contains(out, c.want) {
			t.Errorf("toolgate %s: exit %d\n%s%s", strings.Join(c.args, " "), code, out, errOut)
		}
	}
	code, out, errOut := runCLI(t, "call", "--config", path, "--principal", `{"id":"u"}`, "--tool", "get_order", "--args", `{"order_id":"ORD-1"}`)
	if code != 1 || !strings.Contains(errOut, "TOOLGATE_TEST_UNSET_TOKEN is not set") {
		t.Errorf("call with the token unset: exit %d\n%s%s", code, out, errOut)
	}
}
