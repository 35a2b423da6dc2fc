package main

import (
	"context"
	"fmt"
	"time"
)

func runPrune(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "prune", "--config FILE --older-than DURATION", "toolgate prune --config toolgate.yaml --older-than 720h")
	path := fs.String("config", "toolgate.yaml", "the config file")
	older := fs.Duration("older-than", 0, "delete records older than this (e.g. 720h for 30 days)")
	if err := noPositional(fs, args); err != nil {
		return err
	}
	if *older <= 0 {
		return fmt.Errorf("%w: --older-than is required and must be positive (e.g. 720h)", errUsage)
	}
	_, st, err := openConfigStore(ctx, *path)
	if err != nil {
		return err
	}
	defer st.Close()
	cutoff := time.Now().Add(-*older)
	n, err := st.Prune(ctx, cutoff)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Deleted %d record(s) older than %s (before %s). Started and unknown operations are kept.\n", n, *older, cutoff.UTC().Format(time.RFC3339))
	return nil
}
