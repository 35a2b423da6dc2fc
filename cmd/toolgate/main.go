// Command toolgate is the toolgate server, MCP server and command line.
//
// Exit codes: 0 success; 1 the command failed (a problem it names); 2 the
// command line was wrong (usage printed). In particular: `toolgate call`
// exits 1 when the tool call's result is ok: false (the envelope is still
// printed); `toolgate replay` exits 1 when the rebuilt state does not match
// the stored one; `toolgate serve` exits 0 after a graceful shutdown and 1
// when calls were still running at the shutdown deadline or a second
// SIGTERM ended it at once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// command is one subcommand of the table in commands.go: run gets the
// arguments after its name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

// env is what a command reads and writes besides its arguments.
type env struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	getenv         func(string) string
}

// errUsage marks a command-line mistake (exit code 2).
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &env{stdout: os.Stdout, stderr: os.Stderr, stdin: os.Stdin, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(e.stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = []string{"version"}
	}
	cmd, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(e.stderr, "toolgate: unknown command %q\n\n", args[0])
		usage(e.stderr)
		return 2
	}
	err := cmd.run(ctx, e, args[1:])
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(e.stderr, "toolgate %s: %v\n", args[0], err)
		return 2
	}
	fmt.Fprintf(e.stderr, "toolgate %s: %v\n", args[0], err)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "toolgate: the safe path between an LLM agent and the tools that act on the world.")
	fmt.Fprintln(w, "\nUsage: toolgate <command> [flags]   (toolgate <command> --help for an example)")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nExit codes: 0 success, 1 failure (the message says why), 2 wrong usage.")
}

// flags makes a FlagSet whose --help prints the summary, the flags and an
// example.
func flags(e *env, name, synopsis, example string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		w := fs.Output()
		cmd, _ := lookup(name)
		fmt.Fprintf(w, "Usage: toolgate %s %s\n\n%s\n\nFlags:\n", name, synopsis, cmd.summary)
		fs.PrintDefaults()
		fmt.Fprintf(w, "\nExample:\n  %s\n", strings.ReplaceAll(example, "\n", "\n  "))
	}
	return fs
}

// parse parses flags before, between and after the positional arguments
// (`approvals approve --by alice ID` and `approvals approve ID --by alice`
// alike), mapping mistakes to errUsage. "--" ends the flags: what follows
// it is positional even when it starts with "-". Afterwards fs.Args() is
// the positional arguments, in order.
//
// The standard flag package stops at the first positional argument;
// parsing again after each one is all it takes to accept flags anywhere,
// so no flag library is needed.
func parse(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		rest := fs.Args()
		if endedAtDashes(fs, args[:len(args)-len(rest)]) {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	// Every flag is set: parsing "--" and the positional arguments only
	// makes them fs.Args().
	return fs.Parse(append([]string{"--"}, pos...))
}

// endedAtDashes reports whether the flags consumed ended with a "--" that
// ended the flags, rather than one given as a flag's value (--comment --).
func endedAtDashes(fs *flag.FlagSet, consumed []string) bool {
	n := len(consumed)
	if n == 0 || consumed[n-1] != "--" {
		return false
	}
	if n == 1 {
		return true
	}
	prev := consumed[n-2]
	name := strings.TrimLeft(prev, "-")
	if !strings.HasPrefix(prev, "-") || strings.Contains(name, "=") {
		return true
	}
	f := fs.Lookup(name)
	if f == nil {
		return true
	}
	b, isBool := f.Value.(interface{ IsBoolFlag() bool })
	return isBool && b.IsBoolFlag()
}

// positional parses flags anywhere (see parse) and returns the positional
// arguments.
func positional(fs *flag.FlagSet, args []string) ([]string, error) {
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	return fs.Args(), nil
}

// noPositional parses flags and refuses any positional argument, for
// commands that take none.
func noPositional(fs *flag.FlagSet, args []string) error {
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}
