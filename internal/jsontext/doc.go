// Package jsontext is toolgate's one JSON toolkit at the level of bytes:
// the scanner every fast path walks JSON text with (whitespace, literals,
// strings with their escapes checked, numbers by JSON's grammar, values
// skipped with a depth limit, an object's members one by one), the string
// escaper with encoding/json's options and canonical JSON's, and the
// checks that let an encoder copy raw JSON as it is.
//
// Each piece is held to encoding/json by differential tests and fuzz
// targets: Valid answers as json.Valid does, AppendString writes what
// json.Marshal writes for the same options, NumberLen accepts exactly the
// numbers json.Valid accepts. The fast paths built on it (the server's
// body splitter, expr's decoder, the envelope encoder, the observation's
// renderer) either answer exactly as encoding/json would or decline, and
// their callers then take encoding/json's path.
//
// Nothing here allocates except AppendString growing its buffer and Text
// building a string: these run on every call.
package jsontext
