// Command toolgate-bench measures toolgate and writes BENCHMARKS.md.
//
//	toolgate-bench faults   a randomised fault run: faults between toolgate and its dependency, then the history check
//	toolgate-bench load     the load comparison: direct, baseline proxy, toolgate read, toolgate write
//	toolgate-bench soak     the fault-injection soak (10,000 write calls) beside a textbook retry loop
//	toolgate-bench report   everything above plus the Go benchmarks; writes BENCHMARKS.md and BENCHMARKS.json
//	toolgate-bench replicas one replica alone, then three at once, on one PostgreSQL: calls/s per replica and a ledger check
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
	"syscall"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string) error
	hidden  bool
}

// commands is every subcommand, in the order the usage lists them. It is a
// function, not a variable, because the subcommands' own usage reaches back
// into it (an initialisation cycle otherwise).
func commands() []command {
	return []command{
		{name: "faults", summary: "a randomised fault run (--seed N --duration D): dependency faults under load, then the history check", run: runFaults},
		{name: "load", summary: "compare direct, a baseline proxy, toolgate read and toolgate write under load", run: runLoad},
		{name: "proxy", summary: "serve the baseline reverse proxy (the load comparison runs it as its own process)", run: runProxy, hidden: true},
		{name: "replicas", summary: "durable writes on PostgreSQL: one replica alone, then three at once; calls/s per replica and a ledger check", run: runReplicas},
		{name: "render", summary: "rewrite BENCHMARKS.md from BENCHMARKS.json and the current bench/notes.md, measuring nothing", run: runRender},
		{name: "report", summary: "run the load comparison, the soak and the Go benchmarks; write BENCHMARKS.md and BENCHMARKS.json", run: runReport},
		{name: "soak", summary: "the fault-injection soak through toolgate, beside a textbook retry loop", run: runSoak},
	}
}

// lookup finds the subcommand called name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
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
	cmd, ok := lookup(args[0])
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
	for _, c := range commands() {
		if !c.hidden {
			fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
		}
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
