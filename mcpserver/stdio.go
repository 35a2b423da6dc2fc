package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineBytes bounds one message on stdio (the SDK's default).
const MaxLineBytes = mcp.DefaultMaxLineLength

// StdioTransport is newline-delimited JSON-RPC on in and out, as the SDK's
// IOTransport, except that a line that is not JSON is answered with a
// JSON-RPC parse error (-32700), and one that is not a JSON-RPC message (or
// is longer than MaxLineBytes) with an invalid-request error (-32600); the
// session goes on. (The SDK alone ends the session at such a line.)
func StdioTransport(in io.Reader, out io.Writer) mcp.Transport {
	w := &lineWriter{w: out}
	return &mcp.IOTransport{
		Reader:        &lineFilter{in: bufio.NewReader(in), closer: in, out: w},
		Writer:        w,
		MaxLineLength: -1, // lineFilter enforces MaxLineBytes
	}
}

// lineWriter serialises writes, so that the filter's error answers and the
// SDK's messages (one Write each) never interleave. Close leaves the
// underlying writer open: stdout outlives a session.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (l *lineWriter) Close() error { return nil }

// lineFilter passes the lines that are JSON-RPC messages (or batches) on
// to the SDK and answers the others itself.
type lineFilter struct {
	in     *bufio.Reader
	closer io.Reader // closed on Close when it is an io.Closer
	out    *lineWriter
	next   []byte // a checked line not yet read
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.next) == 0 {
		line, tooLong, err := f.readLine()
		if tooLong {
			f.reply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid request: a message is at most %d bytes", MaxLineBytes))
		} else if len(bytes.TrimSpace(line)) > 0 {
			if code, msg, id := check(line); code != 0 {
				f.reply(id, code, msg)
			} else {
				f.next = append(line, '\n')
			}
		}
		if err != nil && len(f.next) == 0 {
			return 0, err
		}
		if err != nil {
			break
		}
	}
	n := copy(p, f.next)
	f.next = f.next[n:]
	return n, nil
}

// readLine reads one line without its newline, in a fresh slice. A line
// longer than MaxLineBytes is skipped to its end and reported as too long.
func (f *lineFilter) readLine() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := f.in.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > MaxLineBytes+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

func (f *lineFilter) Close() error {
	if c, ok := f.closer.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// check says why a line is not a JSON-RPC message (code 0: it is one, or a
// batch, which the SDK checks itself), with the request's id when it has one.
func check(line []byte) (code int64, message string, id json.RawMessage) {
	if !json.Valid(line) {
		return jsonrpc.CodeParseError, "Parse error: the message is not JSON", nil
	}
	if t := bytes.TrimSpace(line); t[0] == '[' {
		return 0, "", nil
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(line, &m)
		if len(m.ID) > 0 && m.ID[0] != '"' && (m.ID[0] < '0' || m.ID[0] > '9') && m.ID[0] != '-' {
			m.ID = nil // only a string or a number is an id
		}
		return jsonrpc.CodeInvalidRequest, "Invalid request: " + err.Error(), m.ID
	}
	return 0, "", nil
}

// reply writes a JSON-RPC error answer.
func (f *lineFilter) reply(id json.RawMessage, code int64, message string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: message}})
	_, _ = f.out.Write(append(b, '\n'))
}
