package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
)

// runRender judges the figures of a report's JSON again, with the notes of
// today's bench/notes.md, and writes its Markdown: for a note edited after
// the run that measured them.
func runRender(ctx context.Context, args []string) error {
	fs := flagSet("render", "[--json BENCHMARKS.json] [--out BENCHMARKS.md]")
	jsonIn := fs.String("json", "BENCHMARKS.json", "the report's figures (relative to the module's root); rewritten with the targets judged again")
	out := fs.String("out", "BENCHMARKS.md", "the Markdown report to write (relative to the module's root)")
	if err := parse(fs, args); err != nil {
		return err
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(inRoot(root, *jsonIn))
	if err != nil {
		return err
	}
	data := &reportData{}
	if err := json.Unmarshal(b, data); err != nil {
		return fmt.Errorf("%s: %w", *jsonIn, err)
	}
	if data.notes, err = readNotes(root); err != nil {
		return err
	}
	if data.Faults, err = readFaults(root); err != nil {
		return err
	}
	data.Targets = evaluate(data)
	if err := writeReport(root, *out, *jsonIn, data); err != nil {
		return err
	}
	printTargets(os.Stdout, data.Targets)
	fmt.Printf("wrote %s from %s\n", inRoot(root, *out), inRoot(root, *jsonIn))
	return nil
}
