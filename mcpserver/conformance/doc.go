// Package conformance holds no code: its test runs the official MCP
// conformance suite's server scenarios against the fixture server of
// internal/testsupport/mcpconformance directly and against toolgate's MCP
// server (package mcpserver) in front of it, and fails when a scenario
// fails against the fixture, or passes directly but fails through toolgate
// (docs/mcp.md, "The conformance suite").
package conformance
