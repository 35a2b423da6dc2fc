package stats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/toolgate/toolgate/types"
)

// UnknownTool is the name under which calls of tools that do not exist
// (code unknown_tool) are counted. No real tool can have it: tool names are
// letters, digits, _ and -.
const UnknownTool = "(unknown tool)"

// toolOf is the name a row is counted under.
func toolOf(row *types.Execution) string {
	if row.Code == types.CodeUnknownTool || row.Tool == "" {
		return UnknownTool
	}
	return row.Tool
}

// aggregate is the figures of one tool over some time: one bucket, or the
// merge of many.
type aggregate struct {
	dependency   string
	calls        int64
	errors       int64 // ok = false
	retried      int64 // calls with at least one retry
	retries      int64
	attempts     int64
	inputTokens  int64
	outputTokens int64
	codes        map[types.Code]int64
	latency      *sketch // milliseconds; nil when rows are kept instead

	names []string // interned dependency and code names (mergeEncoded)
}

func newAggregate() *aggregate {
	return &aggregate{codes: map[types.Code]int64{}, latency: newSketch()}
}

// add counts one row.
func (a *aggregate) add(row *types.Execution) {
	if row.Dependency != "" {
		a.dependency = row.Dependency
	}
	a.calls++
	if !row.OK {
		a.errors++
	}
	if row.Retries > 0 {
		a.retried++
	}
	a.retries += int64(max(row.Retries, 0))
	a.attempts += int64(max(row.Attempts, 0))
	a.inputTokens += row.InputTokens
	a.outputTokens += row.OutputTokens
	a.codes[row.Code]++
	if a.latency != nil {
		a.latency.add(row.LatencyMS)
	}
}

// addCounters adds o's counters (not its sketch) to a.
func (a *aggregate) addCounters(o *aggregate) {
	if o.dependency != "" {
		a.dependency = o.dependency
	}
	a.calls += o.calls
	a.errors += o.errors
	a.retried += o.retried
	a.retries += o.retries
	a.attempts += o.attempts
	a.inputTokens += o.inputTokens
	a.outputTokens += o.outputTokens
	for c, n := range o.codes {
		a.codes[c] += n
	}
}

// merge adds o to a.
func (a *aggregate) merge(o *aggregate) {
	a.addCounters(o)
	a.latency.merge(o.latency)
}

// clone returns a deep copy.
func (a *aggregate) clone() *aggregate {
	c := *a
	c.codes = maps.Clone(a.codes)
	c.latency = a.latency.clone()
	c.names = nil
	return &c
}

// The encoding of a bucket's Data, version 1:
//
//	byte     version (1)
//	uvarint  calls, errors, retried, retries, attempts
//	varint   input tokens, output tokens
//	string   dependency                  (uvarint length, bytes)
//	uvarint  number of codes, then per code: string code, uvarint count
//	sketch   the latency sketch (sketch.encode), to the end
//
// The version also fixes the sketch's mapping (RelativeAccuracy): a change
// of accuracy needs a new version.
const encodingVersion = 1

// encode appends the bucket encoding of a to b.
func (a *aggregate) encode(b []byte) []byte {
	b = append(b, encodingVersion)
	for _, n := range []int64{a.calls, a.errors, a.retried, a.retries, a.attempts} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	b = binary.AppendVarint(b, a.inputTokens)
	b = binary.AppendVarint(b, a.outputTokens)
	b = appendString(b, a.dependency)
	b = binary.AppendUvarint(b, uint64(len(a.codes)))
	for _, c := range slices.Sorted(maps.Keys(a.codes)) {
		b = appendString(b, string(c))
		b = binary.AppendUvarint(b, uint64(a.codes[c]))
	}
	return a.latency.encode(b)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// errCorrupt is returned for bucket data that does not decode.
var errCorrupt = errors.New("stats: corrupt bucket data")

// decodeAggregate decodes a bucket's data.
func decodeAggregate(data []byte) (*aggregate, error) {
	a := newAggregate()
	if err := a.mergeEncoded(data); err != nil {
		return nil, err
	}
	return a, nil
}

// mergeEncoded adds an encoded bucket to a without building a sketch for
// it: the encoded bins are added into a's sketch directly. On an error a is
// unchanged. It allocates nothing once a has seen the bucket's codes and
// dependency: names are compared as bytes and interned in a.names.
func (a *aggregate) mergeEncoded(data []byte) error {
	r := reader{b: data}
	if v := r.byte(); v != encodingVersion {
		if r.err != nil {
			return r.err
		}
		return fmt.Errorf("stats: bucket encoding version %d is not known (this toolgate reads %d)", v, encodingVersion)
	}
	calls, errs, retried, retries, attempts := r.uint(), r.uint(), r.uint(), r.uint(), r.uint()
	inputTokens, outputTokens := r.int(), r.int()
	dependency := r.bytes()
	n := r.uint()
	if r.err == nil && n > int64(len(r.b)) {
		return errCorrupt
	}
	codes := r.b // checked here, added below
	for i := int64(0); i < n && r.err == nil; i++ {
		r.bytes()
		r.uint()
	}
	if r.err != nil {
		return r.err
	}
	codes = codes[:len(codes)-len(r.b)]
	if a.latency.mergeEncoded(&r); r.err != nil {
		return r.err
	}
	if len(dependency) != 0 && string(dependency) != a.dependency {
		a.dependency = a.intern(dependency)
	}
	a.calls += calls
	a.errors += errs
	a.retried += retried
	a.retries += retries
	a.attempts += attempts
	a.inputTokens += inputTokens
	a.outputTokens += outputTokens
	for r = (reader{b: codes}); len(r.b) != 0; {
		c := r.bytes()
		a.codes[types.Code(a.intern(c))] += r.uint()
	}
	return nil
}

// intern returns b as a string, the same string for the same bytes, so that
// merging many buckets allocates each name once.
func (a *aggregate) intern(b []byte) string {
	for _, s := range a.names {
		if s == string(b) {
			return s
		}
	}
	s := string(b)
	a.names = append(a.names, s)
	return s
}

// reader decodes the bucket encoding; the first error sticks.
type reader struct {
	b   []byte
	err error
}

// fail marks the input corrupt.
func (r *reader) fail() {
	if r.err == nil {
		r.err = errCorrupt
	}
}

func (r *reader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.err = errCorrupt
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) uint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > 1<<62 {
		r.err = errCorrupt
		return 0
	}
	r.b = r.b[n:]
	return int64(v)
}

func (r *reader) int() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

// bytes reads a string; the result is part of the input.
func (r *reader) bytes() []byte {
	n := r.uint()
	if r.err != nil {
		return nil
	}
	if n > int64(len(r.b)) {
		r.err = errCorrupt
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}
