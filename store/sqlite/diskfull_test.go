package sqlite

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// A store on a full file system: writes fail with store.ErrUnavailable
// (not a bare SQLite error), nothing is lost, and writes succeed again
// once space is freed, with no reopening. The file system is a real 4 MB
// tmpfs; mounting needs root, so elsewhere the test is skipped (it fails
// instead under CI=true).
func TestDiskFullIsUnavailableAndRecovers(t *testing.T) {
	mnt := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=4m"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a tmpfs: %v (the disk-full test needs root)", err)
		}
		t.Skipf("mount a tmpfs: %v: the disk-full test needs root (it fails instead under CI=true)", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(mnt, 0) })
	s, err := Open(t.Context(), filepath.Join(mnt, "toolgate.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	big := json.RawMessage(`{"pad":"` + strings.Repeat("x", 64<<10) + `"}`)
	if err := s.CreateRun(t.Context(), &types.Run{ID: "before", State: big}); err != nil {
		t.Fatal(err)
	}

	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = f.Write(make([]byte, 64<<10))
	}
	f.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the file system: %v", err)
	}
	var full error
	for i := 0; i < 200 && full == nil; i++ { // the WAL may have room for a few
		full = s.CreateRun(t.Context(), &types.Run{ID: fmt.Sprintf("full-%d", i), State: big})
	}
	if !errors.Is(full, store.ErrUnavailable) {
		t.Fatalf("a write on a full disk: %v, want store.ErrUnavailable", full)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRun(t.Context(), &types.Run{ID: "after", State: big}); err != nil {
		t.Fatalf("a write once space is back: %v", err)
	}
	for _, id := range []string{"before", "after"} {
		if _, err := s.GetRun(t.Context(), id); err != nil {
			t.Fatalf("run %s: %v", id, err)
		}
	}
}
