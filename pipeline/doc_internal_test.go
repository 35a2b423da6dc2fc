package pipeline

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"testing"
)

// The package doc names, for each stage, the file and the functions where
// it happens: each must still be declared there, and still be named there.
func TestDocNamesWhereEachStageHappens(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file  string
		funcs []string
	}{
		{"call.go", []string{"Call", "CallRun", "callRun", "run"}},
		{"flight.go", nil},
		{"validate.go", []string{"judge", "approve", "checkOwner"}},
		{"admission.go", []string{"admit", "admissionFor", "takeStepFirst", "refused", "awaitRecords", "admitLimited"}},
		{"ledger.go", []string{"beginWrite", "begin", "existing"}},
		{"attempt.go", []string{"execute", "attempts", "send", "again", "failed", "lookup"}},
		{"verify.go", []string{"unsettled", "unknownOutcome", "settleByVerify", "checkResent"}},
		{"finish.go", []string{"normalise", "feedback", "finish", "record"}},
		{"commit.go", []string{"row", "stateUpdate", "commit"}},
		{"reload.go", []string{"Reload", "SetTools"}},
		{"outbox.go", nil},
		{"wait.go", []string{"awaitWriter", "await"}},
		{"trace.go", nil},
		{"reconcile.go", nil},
		{"upstream.go", nil},
		{"readtools.go", nil},
		{"log.go", nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(tc.file) + `\b`).Match(doc) {
				t.Errorf("doc.go does not name %s", tc.file)
			}
			f, err := parser.ParseFile(token.NewFileSet(), tc.file, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			declared := map[string]bool{}
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok {
					declared[fn.Name.Name] = true
				}
			}
			for _, name := range tc.funcs {
				if !declared[name] {
					t.Errorf("doc.go says %s happens in %s, which declares no such function", name, tc.file)
				}
				if !regexp.MustCompile(`\b` + name + `\b`).Match(doc) {
					t.Errorf("doc.go does not name %s (%s)", name, tc.file)
				}
			}
		})
	}
}
