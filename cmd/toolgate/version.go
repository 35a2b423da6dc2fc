package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/toolgate/toolgate/internal/buildinfo"
)

// runVersion is `toolgate version` (also `toolgate --version`): the version,
// the commit and the date it was built from, and the Go version, one per
// line. Release builds carry all four; a build in a checkout reads them from
// what the Go toolchain recorded.
func runVersion(_ context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "Usage: toolgate version\n\nPrints the version, the commit and build date, and the Go version of this binary.")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: version takes no arguments", errUsage)
	}
	fmt.Fprint(e.stdout, buildinfo.Read().String())
	return nil
}
