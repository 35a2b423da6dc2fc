package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/demo"
)

func runDemo(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "demo", "[--speed N] [--json]", "toolgate demo --speed 10 --json")
	speed := fs.Float64("speed", 1, "divide every duration by this factor (10 runs the 16 s incident in under 2 s)")
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	store := fs.String("store", "", "toolgate store for the demo (default: a SQLite file in a temporary directory)")
	if err := noPositional(fs, args); err != nil {
		return err
	}
	if *speed <= 0 {
		return fmt.Errorf("%w: --speed must be positive", errUsage)
	}
	dir, err := os.MkdirTemp("", "toolgate-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if !*asJSON {
		fmt.Fprintf(e.stdout, "Running the incident four ways (about %s)...\n\n", demoTime(*speed))
	}
	rep, err := demo.Run(ctx, demo.Options{Speed: *speed, Store: *store, Dir: dir})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	demo.Print(e.stdout, rep)
	return nil
}

// demoSeconds is how long the demo takes at speed 1, as measured:
// `time toolgate demo` took 47.8 s (real) on 2026-12-02.
const demoSeconds = 48

// demoTime is the announced duration of the demo at speed.
func demoTime(speed float64) string {
	s := demoSeconds / speed
	if s >= 10 {
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.1f s", s)
}
