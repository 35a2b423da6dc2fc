// Command toolgate-bench measures toolgate and writes BENCHMARKS.md.
//
//	toolgate-bench load     the load comparison: direct, baseline proxy, toolgate read, toolgate write
//	toolgate-bench soak     the fault-injection soak (10,000 write calls) beside a textbook retry loop
//	toolgate-bench report   everything above plus the Go benchmarks; writes BENCHMARKS.md and BENCHMARKS.json
//
// Run it from the module's root: go run ./cmd/toolgate-bench report. Each
// subcommand takes --help.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string) error
	hidden  bool
}

var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, args []string) error) {
	commands[name] = command{summary: summary, run: run}
}

// errUsage marks a wrong use of the command line (exit status 2).
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "toolgate-bench: no command %q\n", args[0])
		usage(stderr)
		return 2
	}
	err := cmd.run(ctx, args[1:])
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "toolgate-bench:", err)
		return 2
	}
	fmt.Fprintln(stderr, "toolgate-bench:", err)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: toolgate-bench <command> [flags]   (run from the module's root)")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
}

// flagSet makes a subcommand's flag set.
func flagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: toolgate-bench %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args, turning a flag error into errUsage.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}
