package config

// The key reference of docs/config.md is generated from the doc comments of
// this package's structs: document a new key above its field, then run
// `go generate ./config`.
//go:generate go run ../internal/docgen/configdoc -config . -out ../docs/config.md
