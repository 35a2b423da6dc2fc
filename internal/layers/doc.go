// Package layers holds no code: its tests check, with go/build and go/ast,
// that the stages do not import the packages above them (the pipeline,
// another stage's package, the config file's package) and that the edges
// (server, mcpserver, dashboard, cmd) neither import the pipeline nor call
// a Pipeline() escape hatch (the Gateway had one; it is gone), so that such an import
// or call, once removed, cannot come back unnoticed; and that the root
// package holds only the Gateway's files.
package layers
