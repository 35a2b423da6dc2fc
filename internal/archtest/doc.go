// Package archtest holds no code: its tests guard the module's shape, so
// that a shape once reached cannot be lost unnoticed.
//
//   - The layers: the stages do not import the packages above them (the
//     pipeline, another stage's package, the config file's package), and
//     the edges (server, mcpserver, dashboard, cmd) neither import the
//     pipeline nor call a Pipeline() escape hatch (the Gateway had one; it
//     is gone).
//   - The root: the root package holds only the Gateway's files (doc.go,
//     options.go, toolgate.go), and the packages it composes (toolsource,
//     reload) do not import it.
//   - The leaves: a package under internal/ imports nothing of the module
//     outside internal/, so internal/ holds leaves only.
//   - The sizes: no non-test Go file over maxFileLines lines and no
//     function over maxFuncLines.
//
// The tests read the files with go/build and go/ast rather than running go
// list, so that go test's cache sees a changed import.
package archtest
