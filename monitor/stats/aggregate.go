package stats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/toolgate/toolgate/monitor"
	"github.com/toolgate/toolgate/store"
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
	// samples are the calls with at least one attempt: the latencies.
	samples   int64
	refused   int64 // monitor.ClassRefused
	depErrors int64 // monitor.ClassDependencyError
	// refusedCodes counts the refusals by code.
	refusedCodes map[types.Code]int64
	latency      *sketch // milliseconds; nil when rows are kept instead

	names []string // interned dependency and code names (mergeEncoded)
}

func newAggregate() *aggregate {
	return &aggregate{codes: map[types.Code]int64{}, refusedCodes: map[types.Code]int64{}, latency: newSketch()}
}

// sample reports whether a row's latency is a sample: a call that sent at
// least one attempt. A refusal or a replay took no time at the dependency.
func sample(row *types.Execution) bool { return row.Attempts > 0 }

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
	a.inputTokens = store.AddSaturating(a.inputTokens, row.InputTokens)
	a.outputTokens = store.AddSaturating(a.outputTokens, row.OutputTokens)
	a.codes[row.Code]++
	switch monitor.ClassOf(row) {
	case monitor.ClassRefused:
		a.refused++
		a.refusedCodes[row.Code]++
	case monitor.ClassDependencyError:
		a.depErrors++
	}
	if !sample(row) {
		return
	}
	a.samples++
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
	a.inputTokens = store.AddSaturating(a.inputTokens, o.inputTokens)
	a.outputTokens = store.AddSaturating(a.outputTokens, o.outputTokens)
	for c, n := range o.codes {
		a.codes[c] += n
	}
	a.samples += o.samples
	a.refused += o.refused
	a.depErrors += o.depErrors
	for c, n := range o.refusedCodes {
		a.refusedCodes[c] += n
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
	c.refusedCodes = maps.Clone(a.refusedCodes)
	c.latency = a.latency.clone()
	c.names = nil
	return &c
}

// The encoding of a bucket's Data, version 2:
//
//	byte     version (2)
//	uvarint  calls, errors, retried, retries, attempts
//	varint   input tokens, output tokens
//	string   dependency                  (uvarint length, bytes)
//	uvarint  number of codes, then per code: string code, uvarint count
//	uvarint  samples, refused, dependency errors
//	uvarint  number of refused codes, then per code: string code, uvarint count
//	sketch   the latency sketch (sketch.encode), to the end
//
// Version 1 had neither the samples nor the refusals, and its sketch held
// every call's latency: it is still read, its calls taken as samples and
// its failures as the dependency's (what the figures said then). The
// version also fixes the sketch's mapping (RelativeAccuracy): a change of
// accuracy needs a new version.
const encodingVersion = 2

// encode appends the bucket encoding of a to b.
func (a *aggregate) encode(b []byte) []byte {
	b = append(b, encodingVersion)
	for _, n := range []int64{a.calls, a.errors, a.retried, a.retries, a.attempts} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	b = binary.AppendVarint(b, a.inputTokens)
	b = binary.AppendVarint(b, a.outputTokens)
	b = appendString(b, a.dependency)
	b = appendCodes(b, a.codes)
	for _, n := range []int64{a.samples, a.refused, a.depErrors} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	b = appendCodes(b, a.refusedCodes)
	return a.latency.encode(b)
}

// appendCodes appends counts by code: their number, then each code and
// count in code order.
func appendCodes(b []byte, codes map[types.Code]int64) []byte {
	b = binary.AppendUvarint(b, uint64(len(codes)))
	for _, c := range slices.Sorted(maps.Keys(codes)) {
		b = appendString(b, string(c))
		b = binary.AppendUvarint(b, uint64(codes[c]))
	}
	return b
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
	v := r.byte()
	if v != 1 && v != encodingVersion {
		if r.err != nil {
			return r.err
		}
		return fmt.Errorf("stats: bucket encoding version %d is not known (this toolgate reads 1 and %d)", v, encodingVersion)
	}
	calls, errs, retried, retries, attempts := r.uint(), r.uint(), r.uint(), r.uint(), r.uint()
	inputTokens, outputTokens := r.int(), r.int()
	dependency := r.bytes()
	codes := r.codes() // checked here, added below
	samples, refused, depErrors := calls, int64(0), errs
	var refusedCodes []byte
	if v >= 2 {
		samples, refused, depErrors = r.uint(), r.uint(), r.uint()
		refusedCodes = r.codes()
	}
	if r.err != nil {
		return r.err
	}
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
	a.inputTokens = store.AddSaturating(a.inputTokens, inputTokens)
	a.outputTokens = store.AddSaturating(a.outputTokens, outputTokens)
	a.samples += samples
	a.refused += refused
	a.depErrors += depErrors
	a.addCodes(a.codes, codes)
	if a.refusedCodes == nil {
		a.refusedCodes = map[types.Code]int64{}
	}
	a.addCodes(a.refusedCodes, refusedCodes)
	return nil
}

// addCodes adds counts by code that reader.codes checked.
func (a *aggregate) addCodes(into map[types.Code]int64, codes []byte) {
	for r := (reader{b: codes}); len(r.b) != 0; {
		c := r.bytes()
		into[types.Code(a.intern(c))] += r.uint()
	}
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

// codes checks counts by code (appendCodes) and returns their bytes
// after the number (for aggregate.addCodes), part of the input.
func (r *reader) codes() []byte {
	n := r.uint()
	if r.err == nil && n > int64(len(r.b)) {
		r.fail()
	}
	start := r.b
	for i := int64(0); i < n && r.err == nil; i++ {
		r.bytes()
		r.uint()
	}
	if r.err != nil {
		return nil
	}
	return start[:len(start)-len(r.b)]
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
