package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/postgres"
	"github.com/toolgate/toolgate/store/sqlite"
	"github.com/toolgate/toolgate/store/storeurl"
)

// runMigrate is `toolgate migrate`: with --status, which schema migrations
// the configured store has and which this binary would apply (nothing is
// changed); without, it applies the pending ones, as serve does when it
// opens the store, so that an upgrade's migration can run before the new
// version serves.
func runMigrate(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "migrate", "[--config FILE] [--status] [--json]", "toolgate migrate --config toolgate.yaml --status")
	path := fs.String("config", "toolgate.yaml", "the config file (its store is the one migrated)")
	status := fs.Bool("status", false, "list applied and pending migrations without changing anything")
	asJSON := fs.Bool("json", false, "with --status: print the status as JSON")
	if err := noPositional(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return err
	}
	st, err := migrationStatus(ctx, cfg.Store)
	if err != nil {
		return err
	}
	if *status {
		if *asJSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(st); err != nil {
				return err
			}
		} else {
			printMigrationStatus(e, st)
		}
		if st.Newer() {
			return fmt.Errorf("the store is newer than this binary: run the toolgate that wrote it, or restore a backup (docs/upgrade.md)")
		}
		return nil
	}
	if st.Newer() {
		return fmt.Errorf("%s: schema version %d is newer than this toolgate knows (%d); nothing was changed (docs/upgrade.md, \"Downgrading\")", st.Where, st.Current, st.Known)
	}
	if st.Pending() == 0 {
		fmt.Fprintf(e.stdout, "%s is at schema version %d: nothing to do.\n", st.Where, st.Current)
		return nil
	}
	s, err := storeurl.Open(ctx, cfg.Store, storeurl.Options{})
	if err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s migrated from schema version %d to %d.\n", st.Where, st.Current, st.Known)
	return nil
}

// migrationStatus reads the status of the store the URL names.
func migrationStatus(ctx context.Context, url string) (store.MigrationStatus, error) {
	switch {
	case strings.HasPrefix(url, "sqlite:"):
		p := strings.TrimPrefix(url, "sqlite:")
		st, err := sqlite.MigrationStatus(ctx, p)
		if errors.Is(err, os.ErrNotExist) || (err != nil && !fileExists(p)) {
			return store.MigrationStatus{}, fmt.Errorf("%s does not exist yet: serve, or migrate without --status, creates it with every migration applied", p)
		}
		return st, err
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return postgres.MigrationStatus(ctx, url, "")
	}
	return store.MigrationStatus{}, fmt.Errorf("store %q has no schema to migrate (only sqlite: and postgres:// stores do)", url)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// printMigrationStatus prints:
//
//	sqlite /var/lib/toolgate/toolgate.db: schema version 4, this toolgate knows 5 (1 pending)
//	  applied  0001_init.sql
//	  ...
//	  pending  0005_limits.sql
func printMigrationStatus(e *env, st store.MigrationStatus) {
	fmt.Fprintf(e.stdout, "%s %s: schema version %d, this toolgate knows %d", st.Backend, st.Where, st.Current, st.Known)
	switch n := st.Pending(); {
	case st.Newer():
		fmt.Fprintf(e.stdout, " (the store is NEWER: this toolgate refuses to open it)\n")
	case n == 0:
		fmt.Fprintf(e.stdout, " (up to date)\n")
	default:
		fmt.Fprintf(e.stdout, " (%d pending: applied when toolgate next opens the store)\n", n)
	}
	for _, m := range st.Migrations {
		word := "pending"
		if m.Applied {
			word = "applied"
		}
		fmt.Fprintf(e.stdout, "  %s  %s\n", word, m.Name)
	}
}

// runBackup is `toolgate backup OUT`: a consistent copy of the configured
// SQLite store, taken while toolgate serves from it.
func runBackup(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "backup", "[--config FILE] OUT", "toolgate backup --config toolgate.yaml /var/backups/toolgate-2026-12-02.db")
	path := fs.String("config", "toolgate.yaml", "the config file (its store is the one copied)")
	pos, err := positional(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: backup takes one argument, the file to write", errUsage)
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(cfg.Store, "sqlite:"):
	case strings.HasPrefix(cfg.Store, "postgres://"), strings.HasPrefix(cfg.Store, "postgresql://"):
		return errors.New("the store is PostgreSQL: back it up with pg_dump (docs/upgrade.md, \"Backups\")")
	default:
		return fmt.Errorf("store %q keeps nothing on disk to back up", cfg.Store)
	}
	src := strings.TrimPrefix(cfg.Store, "sqlite:")
	if err := sqlite.Backup(ctx, src, pos[0]); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Backed up %s to %s. Restore: stop toolgate, copy it over the store file, delete its -wal and -shm files, start toolgate.\n", src, pos[0])
	return nil
}

// runReload is `toolgate reload`: SIGHUP to a serving toolgate, which
// reloads its config (for a container with no kill command).
func runReload(_ context.Context, e *env, args []string) error {
	fs := flags(e, "reload", "[--pid N]", "toolgate reload --pid 4242")
	pid := fs.Int("pid", 0, "the serving process (default: the one `toolgate serve` process on this machine or container)")
	if err := noPositional(fs, args); err != nil {
		return err
	}
	if *pid == 0 {
		found, err := findServe()
		if err != nil {
			return err
		}
		*pid = found
	}
	if err := syscall.Kill(*pid, syscall.SIGHUP); err != nil {
		return fmt.Errorf("signal process %d: %w", *pid, err)
	}
	fmt.Fprintf(e.stdout, "Sent SIGHUP to %d: its log, and GET /v1/config (last_reload), say how the reload went.\n", *pid)
	return nil
}

// findServe finds the one `toolgate serve` process in /proc.
func findServe() (int, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return 0, err
	}
	self := os.Getpid()
	var found []int
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(argv) < 2 || filepath.Base(argv[0]) != "toolgate" || argv[1] != "serve" {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if pid != self {
			found = append(found, pid)
		}
	}
	switch len(found) {
	case 0:
		return 0, errors.New("no `toolgate serve` process found; name it with --pid")
	case 1:
		return found[0], nil
	}
	return 0, fmt.Errorf("%d `toolgate serve` processes found (%v); name one with --pid", len(found), found)
}
