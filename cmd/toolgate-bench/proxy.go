package main

import (
	"context"
	"fmt"
	"os"

	"github.com/toolgate/toolgate/bench/load"
)

func runProxy(ctx context.Context, args []string) error {
	fs := flagSet("proxy", "--target URL [--listen ADDR]")
	target := fs.String("target", "", "the dependency's base URL")
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *target == "" {
		return fmt.Errorf("%w: --target is required", errUsage)
	}
	return load.ServeProxy(ctx, os.Stderr, *listen, *target)
}
