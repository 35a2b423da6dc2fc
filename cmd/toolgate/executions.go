package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/toolgate/toolgate/server"
	"github.com/toolgate/toolgate/types"
)

// exportPageSize is how many rows an export reads from the store at a time.
const exportPageSize = server.MaxListLimit

func runExecutions(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "executions", "export --format jsonl|csv [--key NAME] [--run RUN] [--tool TOOL] [--code CODE] [--since TIME] [--until TIME] [--output FILE]",
		"toolgate executions export --config toolgate.yaml --format csv \\\n    --since 2026-12-01T00:00:00Z --until 2026-12-02T00:00:00Z --output 2026-12-01.csv\n"+
			"toolgate executions export --format jsonl --run run_8c1f --code timeout_unknown_outcome")
	path := fs.String("config", "toolgate.yaml", "the config file (its store holds the rows)")
	format := fs.String("format", "", "jsonl (one JSON row per line, as GET /v1/executions answers it) or csv (a header line, then one row per line)")
	output := fs.String("output", "", "the file to write (default: standard output)")
	query := url.Values{}
	for _, name := range []string{"run", "tool", "code", "since", "until"} {
		fs.Func(name, exportFlagHelp[name], func(v string) error { query.Set(name, v); return nil })
	}
	key := fs.String("key", "", "the auth.keys name whose runs to export: --run is then that key's run id (runs are stored under their key, as KEY/RUN, and rows show that stored id)")
	pageSize := fs.Int("page-size", exportPageSize, "rows read from the store at a time")
	quiet := fs.Bool("quiet", false, "no progress on standard error")
	pos, err := positional(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "export" {
		return fmt.Errorf("%w: want: executions export --format jsonl|csv", errUsage)
	}
	newWriter, ok := rowWriters[*format]
	if !ok {
		return fmt.Errorf("%w: --format %q: want jsonl or csv", errUsage, *format)
	}
	if *pageSize < 1 {
		return fmt.Errorf("%w: --page-size %d must be at least 1", errUsage, *pageSize)
	}
	filter, err := server.ParseExecutionQuery(query)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	scopeToKey(&filter, *key)
	_, st, err := openConfigStore(ctx, *path)
	if err != nil {
		return err
	}
	defer st.Close()

	var out io.Writer = e.stdout
	dest := "standard output"
	if *output != "" {
		f, err := os.OpenFile(*output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		out, dest = f, *output
	}
	buf := bufio.NewWriter(out)
	w := newWriter(buf)
	progress := e.stderr
	if *quiet {
		progress = io.Discard
	}
	n, err := exportRows(ctx, st, filter, *pageSize, w, progress)
	if err != nil {
		return fmt.Errorf("after %d rows: %w", n, err)
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := buf.Flush(); err != nil {
		return err
	}
	if f, ok := out.(*os.File); ok && *output != "" {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	fmt.Fprintf(progress, "exported %d %s to %s\n", n, plural(n, "row"), dest)
	return nil
}

// scopeToKey narrows filter to the runs of the auth key named key, when
// key is not "": its run id is then that key's, else every run of the key.
func scopeToKey(filter *types.ExecutionFilter, key string) {
	if key == "" {
		return
	}
	if filter.RunID != "" {
		filter.RunID = types.ScopedRunID(key, filter.RunID)
	} else {
		filter.Owner = key
	}
}

// exportFlagHelp describes the filter flags, which take the values of the
// query parameters of GET /v1/executions.
var exportFlagHelp = map[string]string{
	"run":   "only the rows of this run",
	"tool":  "only the rows of this tool",
	"code":  "only the rows with this outcome code (ok, upstream_error, ...)",
	"since": "only the rows that finished at or after this RFC 3339 time",
	"until": "only the rows that finished before this RFC 3339 time",
}

// rowLister is the part of the store an export reads.
type rowLister interface {
	ListExecutions(ctx context.Context, f types.ExecutionFilter) ([]types.Execution, error)
}

// exportRows writes every row f selects, newest first, reading pageSize
// rows at a time below the last one read, so that rows committed during the
// export neither shift nor repeat the rows still to come (they are not
// exported: the export is of the rows there when it began). After each
// full page it reports its progress on progress.
func exportRows(ctx context.Context, st rowLister, f types.ExecutionFilter, pageSize int, w rowWriter, progress io.Writer) (int, error) {
	f.Limit = pageSize
	n := 0
	for {
		rows, err := st.ListExecutions(ctx, f)
		if err != nil {
			return n, err
		}
		for i := range rows {
			if err := w.Write(&rows[i]); err != nil {
				return n, err
			}
			n++
		}
		if len(rows) < pageSize {
			return n, nil
		}
		last := rows[len(rows)-1]
		fmt.Fprintf(progress, "exported %d rows so far, down to %s\n", n, last.FinishedAt.UTC().Format(time.RFC3339))
		f.BeforeID = last.ID
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
