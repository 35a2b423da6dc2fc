package packaging_test

import (
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// checkDeb reads the Debian package: its files, their owners and modes,
// the conffile, the maintainer scripts and the unit (systemd-analyze
// verify). As root under CI it installs the package for real, serves the
// packaged config as the toolgate user with the unit's command, and purges
// it again.
func checkDeb(t *testing.T, deb, bin string) {
	need(t, "dpkg-deb")
	list := run(t, ".", "dpkg-deb", "--contents", deb)
	for _, want := range []string{
		"-rwxr-xr-x root/root", "./usr/bin/toolgate\n",
		"./usr/lib/systemd/system/toolgate.service\n",
		"-rw-r----- root/root", "./etc/toolgate/toolgate.yaml\n",
		"drwxr-x--- root/root", "./var/lib/toolgate/\n",
	} {
		if !strings.Contains(list, want) {
			t.Errorf("the package's files lack %q:\n%s", want, list)
		}
	}
	ctrl := t.TempDir()
	run(t, ".", "dpkg-deb", "--control", deb, ctrl)
	if b, _ := os.ReadFile(filepath.Join(ctrl, "conffiles")); strings.TrimSpace(string(b)) != "/etc/toolgate/toolgate.yaml" {
		t.Errorf("conffiles = %q, want the config", b)
	}
	for _, s := range []string{"preinst", "postinst", "prerm", "postrm"} {
		if _, err := os.Stat(filepath.Join(ctrl, s)); err != nil {
			t.Errorf("the package has no %s script", s)
		}
	}
	fields := run(t, ".", "dpkg-deb", "--field", deb, "Package", "Architecture", "Depends")
	if !strings.Contains(fields, "Package: toolgate") || !strings.Contains(fields, "Architecture: "+arch) || !strings.Contains(fields, "adduser") {
		t.Errorf("control fields:\n%s", fields)
	}

	files := t.TempDir()
	run(t, ".", "dpkg-deb", "--extract", deb, files)
	unit, err := os.ReadFile(filepath.Join(files, "usr/lib/systemd/system/toolgate.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"User=toolgate", "ExecStart=/usr/bin/toolgate serve --config /etc/toolgate/toolgate.yaml",
		"ExecReload=/bin/kill -HUP $MAINPID", "StateDirectory=toolgate", "ProtectSystem=strict", "NoNewPrivileges=yes", "CapabilityBoundingSet=\n"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("the unit lacks %q", want)
		}
	}
	t.Run("packaged config", func(t *testing.T) {
		// A config with no tools is valid: the package's serves nothing yet.
		out, err := exec.Command(bin, "check", "--config", filepath.Join(files, "etc/toolgate/toolgate.yaml")).CombinedOutput()
		if err != nil {
			t.Errorf("toolgate check of the packaged config: %v\n%s", err, out)
		}
	})
	t.Run("systemd-analyze verify", func(t *testing.T) {
		need(t, "systemd-analyze")
		// verify wants ExecStart's binary where the unit says: point it at
		// the extracted one.
		dir := t.TempDir()
		text := strings.ReplaceAll(string(unit), "/usr/bin/toolgate", filepath.Join(files, "usr/bin/toolgate"))
		path := filepath.Join(dir, "toolgate.service")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("systemd-analyze", "verify", path).CombinedOutput()
		if err != nil || strings.Contains(string(out), "toolgate.service:") {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	})
	t.Run("install", func(t *testing.T) {
		if os.Getenv("CI") != "true" || os.Geteuid() != 0 {
			t.Skip("installs into this machine: only as root under CI=true")
		}
		need(t, "dpkg")
		if _, err := os.Stat("/usr/bin/toolgate"); err == nil {
			t.Fatal("/usr/bin/toolgate exists already: not installing over it")
		}
		run(t, ".", "dpkg", "--install", deb)
		t.Cleanup(func() {
			if out, err := exec.Command("dpkg", "--purge", "toolgate").CombinedOutput(); err != nil {
				t.Errorf("dpkg --purge: %v\n%s", err, out)
			}
			if _, err := os.Stat("/usr/bin/toolgate"); err == nil {
				t.Error("the binary outlived the purge")
			}
		})
		if out := run(t, ".", "stat", "-c", "%U:%G %a", "/var/lib/toolgate"); strings.TrimSpace(out) != "toolgate:toolgate 750" {
			t.Errorf("/var/lib/toolgate is %s, want toolgate:toolgate 750", out)
		}
		// The unit's command, as the unit's user, in its working directory.
		u, err := user.Lookup("toolgate")
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		port := freePort(t)
		cmd := exec.Command("/usr/bin/toolgate", "serve", "--config", "/etc/toolgate/toolgate.yaml", "--listen", "127.0.0.1:"+itoa(port))
		cmd.Dir = "/var/lib/toolgate"
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		p := startCmd(t, cmd)
		line := p.wait("toolgate listening on ")
		base := strings.TrimSpace(line[strings.Index(line, "http://"):])
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET /healthz: %d", resp.StatusCode)
		}
		if out := run(t, ".", "stat", "-c", "%U", "/var/lib/toolgate/toolgate.db"); strings.TrimSpace(out) != "toolgate" {
			t.Errorf("the store belongs to %s, want toolgate", out)
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		if err := p.exited(); err != nil {
			t.Errorf("serve after SIGTERM: %v", err)
		}
	})
}
