// Package jsontext is toolgate's one home of JSON text, read and written
// the way toolgate needs it.
//
// Reading: the scanner every fast path walks JSON text with (whitespace,
// literals, strings with their escapes checked, numbers by JSON's grammar,
// values skipped with a depth limit, an object's members one by one), Valid
// and the checks that let an encoder copy raw JSON as it is, and Decode and
// DecodeObject, which decode a value with its numbers kept exact as
// json.Number and refuse a key repeated within one object (decode.go).
//
// Writing: the string escaper with encoding/json's options and canonical
// JSON's, and Canonical, the canonical encoding (keys sorted, no
// whitespace, number literals as written) whose Hash keys operations
// (encode.go).
//
// Each piece is held to encoding/json by differential tests and fuzz
// targets: Valid answers as json.Valid does, AppendString writes what
// json.Marshal writes for the same options, NumberLen accepts exactly the
// numbers json.Valid accepts, and Decode's fast decoder answers exactly as
// a json.Decoder with UseNumber would. The fast paths built on it (the
// server's body splitter, Decode, the envelope encoder, the observation's
// renderer) either answer exactly as encoding/json would or decline, and
// their callers then take encoding/json's path.
//
// The scanner and the checks allocate nothing (AppendString only grows its
// buffer, Text only builds a string): they run on every call. Decode and
// Canonical build values and bytes, once per call's arguments.
package jsontext
