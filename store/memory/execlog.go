package memory

import (
	"encoding/json"
	"time"

	"github.com/toolgate/toolgate/types"
)

const (
	// chunkRows is the number of execution rows per chunk of the log.
	chunkRows = 1024
	// blockBytes is the size of a block of the log's text.
	blockBytes = 64 << 10
)

// execLog holds execution rows in ID order without a single pointer in
// them: each row is a fixed-size record, and its strings and JSON are bytes
// in large text blocks. The garbage collector never scans the log, and
// appending never copies the rows already held, so a Commit costs the same
// at the first row and at the ten-millionth.
type execLog struct {
	chunks [][]execRow
	blocks [][]byte
	n      int
}

// The text fields of a row, in the order of execRow.text.
const (
	textRunID = iota
	textCallID
	textTool
	textDependency
	textArgsHash
	textOperationKey
	textCode
	textSideEffect
	textTraceID
	textArgs
	textStatePatch
	textResult
	textFields
)

// span locates one text field in its row's block; length -1 is a nil JSON
// value.
type span struct{ offset, length int32 }

// stamp is a time as seconds and nanoseconds since the Unix epoch.
type stamp struct {
	sec  int64
	nsec int32
}

// execRow is one execution without pointers.
type execRow struct {
	id, step, version         int64
	started, finished         stamp
	latencyMS                 float64
	inputTokens, outputTokens int64
	attempts, retries         int64
	ok, replayed, verified    bool
	block                     int32
	text                      [textFields]span
}

// texts returns the text fields of e in execRow.text order.
func texts(e *types.Execution) [textFields][]byte {
	return [textFields][]byte{
		textRunID: []byte(e.RunID), textCallID: []byte(e.CallID), textTool: []byte(e.Tool),
		textDependency: []byte(e.Dependency), textArgsHash: []byte(e.ArgsHash),
		textOperationKey: []byte(e.OperationKey), textCode: []byte(e.Code),
		textSideEffect: []byte(e.SideEffect), textTraceID: []byte(e.TraceID),
		textArgs: e.Args, textStatePatch: e.StatePatch, textResult: e.Result,
	}
}

// append adds a copy of e, with that id and version, at the end of the log.
func (l *execLog) append(e *types.Execution, id, version int64) {
	row := execRow{
		id: id, step: e.Step, version: version,
		started: toStamp(e.StartedAt), finished: toStamp(e.FinishedAt),
		latencyMS: e.LatencyMS, inputTokens: e.InputTokens, outputTokens: e.OutputTokens,
		attempts: int64(e.Attempts), retries: int64(e.Retries),
		ok: e.OK, replayed: e.Replayed, verified: e.Verified,
	}
	fields := texts(e)
	size := 0
	for _, f := range fields {
		size += len(f)
	}
	block := l.blockFor(size)
	row.block = int32(len(l.blocks) - 1)
	for i, f := range fields {
		if f == nil && i >= textArgs {
			row.text[i] = span{offset: int32(len(*block)), length: -1}
			continue
		}
		row.text[i] = span{offset: int32(len(*block)), length: int32(len(f))}
		*block = append(*block, f...)
	}

	if l.n == len(l.chunks)*chunkRows {
		l.chunks = append(l.chunks, make([]execRow, 0, chunkRows))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, row)
	l.n++
}

// blockFor returns the last block, after making sure it has room for size
// more bytes: a new block when it has not, sized for the row if the row is
// larger than a block.
func (l *execLog) blockFor(size int) *[]byte {
	if len(l.blocks) > 0 {
		last := &l.blocks[len(l.blocks)-1]
		if cap(*last)-len(*last) >= size {
			return last
		}
	}
	l.blocks = append(l.blocks, make([]byte, 0, max(size, blockBytes)))
	return &l.blocks[len(l.blocks)-1]
}

// len is the number of rows.
func (l *execLog) len() int { return l.n }

// at returns the i-th row (0 is the oldest).
func (l *execLog) at(i int) *execRow {
	return &l.chunks[i/chunkRows][i%chunkRows]
}

// str returns a text field of row as a new string.
func (l *execLog) str(row *execRow, field int) string {
	s := row.text[field]
	return string(l.blocks[row.block][s.offset : s.offset+s.length])
}

// equals reports whether a text field of row is s, without allocating.
func (l *execLog) equals(row *execRow, field int, s string) bool {
	sp := row.text[field]
	return string(l.blocks[row.block][sp.offset:sp.offset+sp.length]) == s
}

// json returns a JSON field of row as a new slice; nil stays nil.
func (l *execLog) json(row *execRow, field int) json.RawMessage {
	s := row.text[field]
	if s.length < 0 {
		return nil
	}
	out := make(json.RawMessage, s.length)
	copy(out, l.blocks[row.block][s.offset:s.offset+s.length])
	return out
}

// execution returns row as a types.Execution that shares nothing with the
// log.
func (l *execLog) execution(row *execRow) types.Execution {
	return types.Execution{
		ID: row.id, RunID: l.str(row, textRunID), Step: row.step, CallID: l.str(row, textCallID),
		Tool: l.str(row, textTool), Dependency: l.str(row, textDependency),
		ArgsHash: l.str(row, textArgsHash), Args: l.json(row, textArgs),
		OperationKey: l.str(row, textOperationKey), Code: types.Code(l.str(row, textCode)),
		OK: row.ok, SideEffect: types.SideEffect(l.str(row, textSideEffect)),
		Replayed: row.replayed, Verified: row.verified,
		Attempts: int(row.attempts), Retries: int(row.retries), LatencyMS: row.latencyMS,
		InputTokens: row.inputTokens, OutputTokens: row.outputTokens,
		StartedAt: row.started.time(), FinishedAt: row.finished.time(), Version: row.version,
		StatePatch: l.json(row, textStatePatch), Result: l.json(row, textResult),
		TraceID: l.str(row, textTraceID),
	}
}

// filter returns a log of the rows keep accepts, in the same order.
func (l *execLog) filter(keep func(*execRow) bool) execLog {
	var kept execLog
	for _, chunk := range l.chunks {
		for i := range chunk {
			if keep(&chunk[i]) {
				e := l.execution(&chunk[i])
				kept.append(&e, e.ID, e.Version)
			}
		}
	}
	return kept
}

// zeroStamp is the stamp of the zero time.
var zeroStamp = toStamp(time.Time{})

// toStamp returns t's instant; its location is dropped.
func toStamp(t time.Time) stamp { return stamp{sec: t.Unix(), nsec: int32(t.Nanosecond())} }

// time returns the instant in UTC; the zero stamp is the zero time.
func (s stamp) time() time.Time {
	if s == zeroStamp {
		return time.Time{}
	}
	return time.Unix(s.sec, int64(s.nsec)).UTC()
}

// before reports whether s is earlier than t.
func (s stamp) before(t stamp) bool {
	return s.sec < t.sec || (s.sec == t.sec && s.nsec < t.nsec)
}
