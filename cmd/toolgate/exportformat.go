package main

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/types"
)

// rowWriter writes execution rows in one export format.
type rowWriter interface {
	// Write writes one row.
	Write(row *types.Execution) error
	// Close writes what is buffered (it does not close the destination).
	Close() error
}

// rowWriters are the export formats by their --format name.
var rowWriters = map[string]func(io.Writer) rowWriter{
	"jsonl": func(w io.Writer) rowWriter {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return &jsonlWriter{enc: enc}
	},
	"csv": func(w io.Writer) rowWriter { return &csvWriter{w: csv.NewWriter(w)} },
}

// jsonlWriter writes one JSON object per line, the row as GET
// /v1/executions answers it.
type jsonlWriter struct{ enc *json.Encoder }

func (j *jsonlWriter) Write(row *types.Execution) error { return j.enc.Encode(row) }
func (j *jsonlWriter) Close() error                     { return nil }

// csvColumns are the CSV export's columns, in order: the JSON names of the
// row's fields. Times are RFC 3339 in UTC; args, state_patch and result are
// JSON text.
var csvColumns = []string{
	"id", "run_id", "step", "call_id", "tool", "dependency", "code", "ok", "side_effect", "replayed", "verified",
	"attempts", "retries", "latency_ms", "input_tokens", "output_tokens", "started_at", "finished_at", "version",
	"operation_key", "args_hash", "args", "state_patch", "result", "trace_id",
}

// csvWriter writes a header line, then one line per row.
type csvWriter struct {
	w           *csv.Writer
	wroteHeader bool
}

func (c *csvWriter) Write(row *types.Execution) error {
	if !c.wroteHeader {
		c.wroteHeader = true
		if err := c.w.Write(csvColumns); err != nil {
			return err
		}
	}
	i := strconv.FormatInt
	return c.w.Write([]string{
		i(row.ID, 10), row.RunID, i(row.Step, 10), row.CallID, row.Tool, row.Dependency, string(row.Code),
		strconv.FormatBool(row.OK), string(row.SideEffect), strconv.FormatBool(row.Replayed), strconv.FormatBool(row.Verified),
		strconv.Itoa(row.Attempts), strconv.Itoa(row.Retries), strconv.FormatFloat(row.LatencyMS, 'f', -1, 64),
		i(row.InputTokens, 10), i(row.OutputTokens, 10), csvTime(row.StartedAt), csvTime(row.FinishedAt), i(row.Version, 10),
		row.OperationKey, row.ArgsHash, string(row.Args), string(row.StatePatch), string(row.Result), row.TraceID,
	})
}

// Close writes the header even when there was no row, then flushes.
func (c *csvWriter) Close() error {
	if !c.wroteHeader {
		c.wroteHeader = true
		if err := c.w.Write(csvColumns); err != nil {
			return err
		}
	}
	c.w.Flush()
	return c.w.Error()
}

func csvTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
