package main

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/internal/buildinfo"
)

// runVersion is `toolgate version` (also `toolgate --version`): the version,
// the commit and the date it was built from, and the Go version, one per
// line. Release builds carry all four; a build in a checkout reads them from
// what the Go toolchain recorded.
func runVersion(_ context.Context, e *env, args []string) error {
	fs := flags(e, "version", "", "toolgate version")
	if err := noPositional(fs, args); err != nil {
		return err
	}
	fmt.Fprint(e.stdout, buildinfo.Read().String())
	return nil
}
