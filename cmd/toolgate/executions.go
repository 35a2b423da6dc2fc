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

// runExecutions is toolgate executions export: the rows of the config's
// store that the flags select, newest first, written as JSON lines or CSV
// to a file or standard output.
func runExecutions(ctx context.Context, e *env, args []string) error {
	xf, err := parseExportFlags(e, args)
	if err != nil {
		return err
	}
	_, st, err := openConfigStore(ctx, xf.path)
	if err != nil {
		return err
	}
	defer st.Close()

	var out io.Writer = e.stdout
	dest := "standard output"
	var file *os.File
	if xf.output != "" {
		if file, err = os.OpenFile(xf.output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err != nil {
			return err
		}
		defer file.Close()
		out, dest = file, xf.output
	}
	progress := e.stderr
	if xf.quiet {
		progress = io.Discard
	}
	n, err := writeExport(ctx, st, xf, out, progress)
	if err != nil {
		return err
	}
	if file != nil {
		if err := file.Sync(); err != nil {
			return err
		}
	}
	fmt.Fprintf(progress, "exported %d %s to %s\n", n, plural(n, "row"), dest)
	return nil
}

// exportFlags are the flags of toolgate executions export, parsed and
// checked.
type exportFlags struct {
	path, output string
	newWriter    func(io.Writer) rowWriter // of --format
	filter       types.ExecutionFilter     // scoped to --key
	pageSize     int
	quiet        bool
}

// parseExportFlags parses and checks the flags of toolgate executions
// export: a usage error without the export subcommand, with an unknown
// format or page size, or with a filter GET /v1/executions would refuse.
func parseExportFlags(e *env, args []string) (*exportFlags, error) {
	fs := flags(e, "executions", "export --format jsonl|csv [--key NAME] [--run RUN] [--tool TOOL] [--code CODE] [--since TIME] [--until TIME] [--output FILE]",
		"toolgate executions export --config toolgate.yaml --format csv \\\n    --since 2026-12-01T00:00:00Z --until 2026-12-02T00:00:00Z --output 2026-12-01.csv\n"+
			"toolgate executions export --format jsonl --run run_8c1f --code timeout_unknown_outcome")
	xf := &exportFlags{}
	fs.StringVar(&xf.path, "config", "toolgate.yaml", "the config file (its store holds the rows)")
	format := fs.String("format", "", "jsonl (one JSON row per line, as GET /v1/executions answers it) or csv (a header line, then one row per line)")
	fs.StringVar(&xf.output, "output", "", "the file to write (default: standard output)")
	query := url.Values{}
	for _, name := range []string{"run", "tool", "code", "since", "until"} {
		fs.Func(name, exportFlagHelp[name], func(v string) error { query.Set(name, v); return nil })
	}
	key := fs.String("key", "", "the auth.keys name whose runs to export: --run is then that key's run id (runs are stored under their key, as KEY/RUN, and rows show that stored id)")
	fs.IntVar(&xf.pageSize, "page-size", exportPageSize, "rows read from the store at a time")
	fs.BoolVar(&xf.quiet, "quiet", false, "no progress on standard error")
	pos, err := positional(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 1 || pos[0] != "export" {
		return nil, fmt.Errorf("%w: want: executions export --format jsonl|csv", errUsage)
	}
	var ok bool
	if xf.newWriter, ok = rowWriters[*format]; !ok {
		return nil, fmt.Errorf("%w: --format %q: want jsonl or csv", errUsage, *format)
	}
	if xf.pageSize < 1 {
		return nil, fmt.Errorf("%w: --page-size %d must be at least 1", errUsage, xf.pageSize)
	}
	if xf.filter, err = server.ParseExecutionQuery(query); err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	scopeToKey(&xf.filter, *key)
	return xf, nil
}

// writeExport writes the rows the flags select to out, buffered, in the
// flags' format, and returns how many it wrote; an error says after how
// many rows it came.
func writeExport(ctx context.Context, st rowLister, xf *exportFlags, out, progress io.Writer) (int, error) {
	buf := bufio.NewWriter(out)
	w := xf.newWriter(buf)
	n, err := exportRows(ctx, st, xf.filter, xf.pageSize, w, progress)
	if err != nil {
		return n, fmt.Errorf("after %d rows: %w", n, err)
	}
	if err := w.Close(); err != nil {
		return n, err
	}
	return n, buf.Flush()
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

// plural is word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
