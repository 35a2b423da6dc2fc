package expr

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
)

// CostLimit bounds the work one evaluation may do (CEL's runtime cost
// units, roughly one per operation and per element visited). An expression
// that exceeds it fails with an error instead of running on.
const CostLimit = 1_000_000

// MaxSourceLength bounds the length of one expression's source, in code
// points.
const MaxSourceLength = 4096

// The variables every expression may use. All are dynamically typed.
var variableNames = []string{"args", "principal", "state", "result", "run_id", "call_id", "tool"}

// Env is the CEL environment that compiles toolgate's expressions. It
// declares the variables args, principal, state, result, run_id, call_id and
// tool (all dyn), the standard library, optional values (state.?x.orValue(0))
// and the strings extension, and allows comparisons across int, uint and
// double. An Env is safe for concurrent use.
type Env struct {
	cel *cel.Env
	// args are the declared top-level arguments of an environment made by
	// ForSchema (nil otherwise): an unknown one is named with them.
	args []string
}

// NewEnv builds the environment.
func NewEnv() (*Env, error) { return newEnv(nil) }

// newEnv builds an environment whose variables are dyn except those typed
// gives a type to; extra options (a type provider) come first.
func newEnv(typed map[string]*cel.Type, extra ...cel.EnvOption) (*Env, error) {
	opts := append(extra,
		cel.CustomTypeAdapter(adapter{}),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(),
		cel.ParserExpressionSizeLimit(MaxSourceLength),
	)
	for _, name := range variableNames {
		t := typed[name]
		if t == nil {
			t = cel.DynType
		}
		opts = append(opts, cel.Variable(name, t))
	}
	env, err := cel.NewEnv(opts...)
	if err != nil {
		return nil, fmt.Errorf("expr: building CEL environment: %w", err)
	}
	return &Env{cel: env}, nil
}

// Program is one compiled expression. It is compiled once and is safe for
// concurrent Eval.
type Program struct {
	src string
	prg cel.Program
	// vars are the toolgate variables the expression refers to, found in
	// the checked AST's references (see Uses).
	vars []string
}

// Compile parses and type-checks src. The error explains every issue CEL
// found on one line, with positions ("undeclared reference to 'arg' (column
// 1); ...").
func (e *Env) Compile(src string) (*Program, error) {
	p, _, err := e.compile(src)
	return p, err
}

// CompileBool is Compile for expressions that must yield a bool (rules,
// owner.expect, verify.found): an expression the checker can prove is of
// another type ("args.amount + 1" is an int) is refused at compile time.
// Expressions over dynamic values are accepted and checked at Eval.
func (e *Env) CompileBool(src string) (*Program, error) {
	p, out, err := e.compile(src)
	if err != nil {
		return nil, err
	}
	if !out.IsExactType(cel.BoolType) && !out.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("expression yields %s, want a bool condition such as %q", out, "args.amount > 100")
	}
	return p, nil
}

func (e *Env) compile(src string) (*Program, *cel.Type, error) {
	if strings.TrimSpace(src) == "" {
		return nil, nil, errors.New("empty expression")
	}
	ast, iss := e.cel.Compile(src)
	if iss != nil && iss.Err() != nil {
		return nil, nil, errors.New(e.argsHint(issuesText(iss)))
	}
	prg, err := e.cel.Program(ast,
		cel.CostLimit(CostLimit),
		cel.EvalOptions(cel.OptOptimize),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot plan expression: %w", err)
	}
	return &Program{src: src, prg: prg, vars: referencedVariables(ast)}, ast.OutputType(), nil
}

var expectedTokens = regexp.MustCompile(` expecting (\{[^}]*\}|\S+)`)

// issuesText renders CEL's issues as one line.
func issuesText(iss *cel.Issues) string {
	errs := iss.Errors()
	parts := make([]string, 0, len(errs))
	for _, e := range errs {
		// ANTLR's list of expected tokens is noise to a config author.
		msg := expectedTokens.ReplaceAllString(e.Message, "")
		if loc := e.Location; loc != nil && loc.Line() > 0 {
			if loc.Line() > 1 {
				msg += fmt.Sprintf(" (line %d, column %d)", loc.Line(), loc.Column()+1)
			} else {
				msg += fmt.Sprintf(" (column %d)", loc.Column()+1)
			}
		}
		parts = append(parts, msg)
	}
	if len(parts) == 0 {
		return strings.Join(strings.Fields(iss.String()), " ")
	}
	return strings.Join(parts, "; ")
}

// Source returns the expression's text.
func (p *Program) Source() string { return p.src }

// Eval evaluates the expression against v and converts the result back to
// plain JSON values: nil, bool, string, json.Number (ints and uints exactly,
// doubles in their shortest form), []any and map[string]any. A CEL error
// (no such key, overflow, cost limit exceeded) or a result that is not JSON
// (NaN, a type value) is returned as an error.
func (p *Program) Eval(v *Vars) (any, error) {
	out, _, err := p.prg.Eval(activation{v: v})
	if err != nil {
		return nil, errors.New(evalErrorText(err))
	}
	res, err := toJSON(out, 0)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// EvalBool evaluates an expression that must yield a bool; any other result
// is an error naming what it got.
func (p *Program) EvalBool(v *Vars) (bool, error) {
	out, _, err := p.prg.Eval(activation{v: v})
	if err != nil {
		return false, errors.New(evalErrorText(err))
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("expression yielded %s, not a bool", typeWord(out))
	}
	return bool(b), nil
}

// evalErrorText keeps CEL's runtime message short and single-line.
func evalErrorText(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
