package validate

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/types"
)

// Codes of refusals that are not in the types package: they come from
// rules.
const (
	// CodeRuleDenied is the code of a deny rule that names none.
	CodeRuleDenied types.Code = "rule_denied"
	// CodeRuleError is the code of a call refused because a rule could not
	// be evaluated (a missing key, an overflow, the cost limit): rules fail
	// closed.
	CodeRuleError types.Code = "rule_error"
)

// Validator holds every tool of a config, compiled. It is immutable and
// safe for concurrent use.
type Validator struct {
	env   *expr.Env
	tools map[string]*Compiled
	names []string

	// catalogues are the API keys' tool catalogues, resolved once.
	catalogues *config.Catalogues
	// importsPending: compiled from a config whose imported tools are not
	// there (check --offline); a reference to an undeclared tool may be
	// to one of them, and is not a problem.
	importsPending bool
}

// Compiled is one tool with everything Check and the later stages need
// compiled once.
type Compiled struct {
	// Name is the tool's name.
	Name string
	// Spec is the tool as configured. It is shared; do not modify it.
	Spec *config.Tool
	// Effect is Spec.Effect, or write when it is empty.
	Effect types.Effect
	// Rules are the compiled rules, in order.
	Rules []*Rule
	// KeyTemplate makes the operation key; nil when idempotency.key is
	// empty (the key is then a hash of run id, tool and canonical args).
	KeyTemplate *expr.Template
	// StateExprs are the state updates, by state key.
	StateExprs map[string]*expr.Program
	// OwnerArgs and VerifyArgs build the lookup arguments, by argument
	// name; nil when there is no owner or verify.
	OwnerArgs, VerifyArgs map[string]*expr.Program
	// OwnerExpect and VerifyFound judge the lookup's result.
	OwnerExpect, VerifyFound *expr.Program
	// VerifyResult, when the verify block has `result:`, picks the data a
	// verified call returns out of the verify read's answer (so `state:`
	// updates see the same shape as the tool's own answer).
	VerifyResult *expr.Program
	// PathParams are the arguments named in Request.Path, in order.
	PathParams []string
	// Required are the required arguments, in schema order.
	Required []string
	// Properties are the declared arguments, sorted.
	Properties []string
	// Quotas are the tool's compiled quotas, in config order.
	Quotas []*Quota
	// StateWriter is true when a call of the tool reads the run's state
	// (StateReader) or changes it (it has state updates): such calls hold
	// the run's state-writer slot (see the pipeline package's doc).
	StateWriter bool
	// StateReader is true when its rules, owner, verify or quota
	// expressions use state: such calls of one run are judged one after
	// another, alone (an exclusive hold of the slot); a writer that does
	// not read the state shares the slot with others like it.
	StateReader bool

	// seesState: the tool has expressions, which can see the run's state
	// (Check decodes it for these only).
	seesState bool

	args   *argSchema
	output *outputSchema // nil: no output_schema
	// ownerIDArgs are this tool's arguments that owner.args passes through
	// unchanged ("args.order_id"): the object ids a not_owner refusal names.
	ownerIDArgs []string
	// env compiles the tool's expressions: args typed from its schema.
	env *expr.Env
}

// hasExpressions reports whether a tool has CEL expressions to compile
// (most imported tools have none, and skip building a typed environment).
func hasExpressions(t *config.Tool) bool {
	return len(t.Rules) > 0 || len(t.State) > 0 || len(t.Quotas) > 0 || t.Owner != nil || t.Verify != nil
}

// Rule is one compiled rule.
type Rule struct {
	// Index is the rule's position in the tool's rules.
	Index int
	// Deny is true when the call must be refused (or held for approval).
	Deny *expr.Program
	// Message is the refusal text; nil when the rule has none.
	Message *expr.Template
	// Code is the refusal code: the configured code, rule_denied when none
	// is set, approval_required for approval rules.
	Code types.Code
	// Approval holds the call for a person instead of refusing it.
	Approval bool
	// Next is the advice of the rule's refusal (meta.next): the rule's
	// next:, escalate when it sets none; empty for approval rules.
	Next types.Next
}

var (
	toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	codePattern     = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	pathParam       = regexp.MustCompile(`\{([^{}]*)\}`)
	argsPassThrough = regexp.MustCompile(`^\s*args\.([A-Za-z_][A-Za-z0-9_]*)\s*$`)
)

// Compile checks and compiles every tool of cfg once: JSON Schemas, CEL
// rules, rule message templates, owner and verify lookups, idempotency key
// templates and state expressions. It also checks what needs that compiled
// knowledge: lookups name an existing read tool and pass it arguments it
// has; dependencies exist; HTTP tools have a request whose path
// placeholders are required arguments. It returns one error joining every
// *Problem found. A nil env means a fresh expr.NewEnv.
func Compile(cfg *config.Config, env *expr.Env) (*Validator, error) {
	if cfg == nil {
		return nil, errors.New("validate: no config")
	}
	if env == nil {
		var err error
		if env, err = expr.NewEnv(); err != nil {
			return nil, err
		}
	}
	v := &Validator{env: env, tools: make(map[string]*Compiled, len(cfg.Tools)), importsPending: cfg.ImportsPending()}
	v.names = slices.Sorted(maps.Keys(cfg.Tools))
	var problems []*Problem
	add := func(ps ...*Problem) { problems = append(problems, ps...) }
	add(v.resolveCatalogues(cfg)...)
	schemas := newSchemaCache()
	for _, name := range v.names {
		c, ps := compileTool(cfg, env, schemas, name, cfg.Tools[name])
		add(ps...)
		if c != nil {
			v.tools[name] = c
		}
	}
	// Lookups need every tool's schema, so they come second.
	for _, name := range v.names {
		c := v.tools[name]
		if c == nil {
			continue
		}
		if spec := c.Spec.Owner; spec != nil {
			args, judge, ps := v.compileLookup(c, "owner", spec)
			add(ps...)
			c.OwnerArgs, c.OwnerExpect = args, judge
			for _, k := range slices.Sorted(maps.Keys(spec.Args)) {
				if m := argsPassThrough.FindStringSubmatch(spec.Args[k]); m != nil && !slices.Contains(c.ownerIDArgs, m[1]) {
					c.ownerIDArgs = append(c.ownerIDArgs, m[1])
				}
			}
		}
		if spec := c.Spec.Verify; spec != nil {
			args, judge, ps := v.compileLookup(c, "verify", spec)
			add(ps...)
			c.VerifyArgs, c.VerifyFound = args, judge
			if spec.Result != "" {
				prog, err := c.env.Compile(spec.Result)
				if err != nil {
					add(&Problem{Tool: name, Key: "verify.result", Why: err.Error()})
				}
				c.VerifyResult = prog
			}
		}
	}
	for _, c := range v.tools {
		c.seesState = hasExpressions(c.Spec)
		c.StateReader = c.readsState()
		c.StateWriter = c.StateReader || len(c.StateExprs) > 0
	}
	if len(problems) > 0 {
		// Group by tool, keeping each tool's problems in the order found.
		slices.SortStableFunc(problems, func(a, b *Problem) int { return strings.Compare(a.Tool, b.Tool) })
		errs := make([]error, len(problems))
		for i, p := range problems {
			errs[i] = p
		}
		return nil, errors.Join(errs...)
	}
	return v, nil
}

// compileTool compiles everything of one tool except its lookups.
func compileTool(cfg *config.Config, env *expr.Env, schemas *schemaCache, name string, spec *config.Tool) (*Compiled, []*Problem) {
	if spec == nil {
		return nil, []*Problem{{name, "", "is empty; a tool needs at least a description and an input_schema"}}
	}
	var problems []*Problem
	bad := func(key, format string, a ...any) {
		problems = append(problems, &Problem{name, key, fmt.Sprintf(format, a...)})
	}
	if !toolNamePattern.MatchString(name) {
		bad("", "tool names may only use letters, digits, _ and - (at most 64): model APIs reject other names")
	}
	c := &Compiled{Name: name, Spec: spec, Effect: spec.Effect}
	if c.Effect == "" {
		c.Effect = types.EffectWrite
	}

	problems = append(problems, c.compileSchemas(schemas, spec)...)
	args := c.args
	// knownArg reports whether a template or path may use an argument; it
	// is lenient when the schema did not compile (that is reported).
	knownArg := func(arg string) bool { return c.args == nil || c.args.declares(arg) }

	// Dependency and request.
	compileRequest(cfg, spec, c, knownArg, bad)

	// Expressions see args typed from the input schema (an undeclared
	// argument, a deny that is not a bool, a string compared with a number
	// are problems here, not rule_errors at run time).
	c.env = env
	if args != nil && hasExpressions(spec) {
		if typed, err := env.ForSchema(spec.InputSchema); err != nil {
			bad("input_schema", "%v", err)
		} else {
			c.env = typed
		}
	}
	env = c.env

	// Rules.
	for i, r := range spec.Rules {
		c.Rules = append(c.Rules, compileRule(env, i, r, c, knownArg, bad))
	}

	c.compileKey(spec.Idempotency.Key, knownArg, bad)

	c.Quotas = compileQuotas(env, spec.Quotas, bad)

	// State updates.
	c.StateExprs = compileState(env, spec.State, bad)
	return c, problems
}

// compileRequest checks spec's dependency and request, and collects the
// request path's placeholders into c.PathParams: each must be a required
// argument of the tool.
func compileRequest(cfg *config.Config, spec *config.Tool, c *Compiled, knownArg func(string) bool, bad func(key, format string, a ...any)) {
	if spec.Dependency != "" {
		if _, ok := cfg.Dependencies[spec.Dependency]; !ok {
			bad("dependency", "names %q, which is not declared under dependencies (declared: %s)",
				spec.Dependency, orNone(slices.Sorted(maps.Keys(cfg.Dependencies))))
		}
	}
	if spec.Func == nil {
		if spec.Dependency == "" {
			bad("dependency", "is empty; an HTTP tool needs a dependency for its base_url (or register the tool as a Go function)")
		}
		if d := cfg.Dependencies[spec.Dependency]; spec.Request == nil && (d == nil || d.MCP == nil) {
			bad("request", "is missing; an HTTP tool needs request: {method, path} (or register the tool as a Go function)")
		}
	}
	if spec.Request != nil {
		for _, m := range pathParam.FindAllStringSubmatch(spec.Request.Path, -1) {
			param := strings.TrimSpace(m[1])
			switch {
			case c.args == nil:
			case !knownArg(param):
				bad("request.path", "placeholder {%s} is not an argument of the tool (arguments: %s)", param, orNone(c.args.props))
				continue
			case !c.args.isRequired(param):
				bad("request.path", "placeholder {%s} names an optional argument; list it under input_schema.required, a path cannot have a hole", param)
			}
			if !slices.Contains(c.PathParams, param) {
				c.PathParams = append(c.PathParams, param)
			}
		}
	}
}

// compileRule compiles the rule r, the i-th of the tool c: its deny
// condition, its code, its next step and its message.
func compileRule(env *expr.Env, i int, r config.Rule, c *Compiled, knownArg func(string) bool, bad func(key, format string, a ...any)) *Rule {
	key := fmt.Sprintf("rules[%d]", i)
	rule := &Rule{Index: i, Approval: r.Approval, Code: types.Code(r.Code)}
	if strings.TrimSpace(r.Deny) == "" {
		bad(key+".deny", "is empty; write a CEL condition that is true when the call must be refused, such as %q", "args.amount > principal.limits.max_amount")
	} else if p, err := env.CompileBool(r.Deny); err != nil {
		bad(key+".deny", "%v", err)
	} else {
		rule.Deny = p
	}
	switch {
	case r.Approval:
		rule.Code = types.CodeApprovalRequired
	case r.Code == "":
		rule.Code = CodeRuleDenied
	case !codePattern.MatchString(r.Code):
		bad(key+".code", "%q is not a code: use lower_snake_case such as over_limit", r.Code)
	case types.Code(r.Code) == types.CodeOK || types.Code(r.Code).Retryable():
		bad(key+".code", "%q is a built-in code that means something else (a rule refusal is final, not ok or retryable); choose your own, such as over_limit", r.Code)
	}
	var nps []nextProblem
	rule.Next, nps = ruleNext(key, r)
	for _, p := range nps {
		bad(p.key, "%s", p.text)
	}
	if r.Message != "" {
		if t, err := expr.ParseTemplate(r.Message); err != nil {
			bad(key+".message", "%v", err)
		} else {
			rule.Message = t
			for _, a := range t.Args() {
				if !knownArg(a) {
					bad(key+".message", "placeholder {%s} is not an argument of the tool (arguments: %s)", a, orNone(c.args.props))
				}
			}
		}
	}
	return rule
}

// compileState compiles the tool's state updates, nil when it has none.
func compileState(env *expr.Env, state map[string]string, bad func(key, format string, a ...any)) map[string]*expr.Program {
	if len(state) == 0 {
		return nil
	}
	exprs := make(map[string]*expr.Program, len(state))
	for _, k := range slices.Sorted(maps.Keys(state)) {
		if strings.TrimSpace(k) == "" {
			bad("state", "has an empty key")
			continue
		}
		p, err := env.Compile(state[k])
		if err != nil {
			bad("state."+k, "%v", err)
			continue
		}
		exprs[k] = p
	}
	return exprs
}

// compileSchemas compiles the tool's input and output schemas into c.
func (c *Compiled) compileSchemas(schemas *schemaCache, spec *config.Tool) []*Problem {
	args, problems := compileSchema(schemas, c.Name, spec.InputSchema)
	if args != nil {
		c.args = args
		c.Required = args.required
		c.Properties = args.props
	}
	out, ps := compileOutput(schemas, c.Name, spec.OutputSchema)
	c.output = out
	return append(problems, ps...)
}

// compileKey compiles the idempotency.key template (none: the key is a
// hash), whose placeholders must be the tool's arguments.
func (c *Compiled) compileKey(src string, knownArg func(string) bool, bad func(key, format string, a ...any)) {
	if src == "" {
		return
	}
	t, err := expr.ParseTemplate(src)
	if err != nil {
		bad("idempotency.key", "%v", err)
		return
	}
	c.KeyTemplate = t
	for _, a := range t.Args() {
		if !knownArg(a) {
			bad("idempotency.key", "placeholder {%s} is not an argument of the tool (arguments: %s)", a, orNone(c.args.props))
		}
	}
}

// compileLookup compiles an owner or verify block of tool name.
func (v *Validator) compileLookup(c *Compiled, block string, spec *config.Lookup) (map[string]*expr.Program, *expr.Program, []*Problem) {
	name, env := c.Name, c.env
	var problems []*Problem
	bad := func(key, format string, a ...any) {
		problems = append(problems, &Problem{name, block + key, fmt.Sprintf(format, a...)})
	}
	target := v.tools[spec.Lookup]
	switch {
	case spec.Lookup == "":
		bad(".lookup", "is empty; name the read tool to call")
	case spec.Lookup == name:
		bad(".lookup", "names the tool itself; name a separate read tool")
	case target == nil:
		if _, declared := slices.BinarySearch(v.names, spec.Lookup); declared || v.importsPending {
			// Declared but broken: its own problems say why. Or maybe
			// imported, while imports are pending (check --offline): it
			// cannot be judged.
			break
		}
		hint := ""
		if s := expr.Suggest(spec.Lookup, v.names); s != "" {
			hint = fmt.Sprintf(" Did you mean %s?", s)
		}
		bad(".lookup", "names %q, which is not a tool.%s Tools: %s", spec.Lookup, hint, nameList(v.names))
	case target.Effect != types.EffectRead:
		bad(".lookup", "names %s, whose effect is %s; a lookup must be a tool with effect: read", spec.Lookup, target.Effect)
		target = nil
	}

	progs := make(map[string]*expr.Program, len(spec.Args))
	for _, k := range slices.Sorted(maps.Keys(spec.Args)) {
		p, err := env.Compile(spec.Args[k])
		if err != nil {
			bad(".args."+k, "%v", err)
			continue
		}
		progs[k] = p
		if target != nil && target.args != nil && !target.args.declares(k) {
			bad(".args."+k, "%s has no argument %s (its arguments: %s)", spec.Lookup, k, orNone(target.args.props))
		}
	}
	if target != nil && target.args != nil {
		var missing []string
		for _, r := range target.args.required {
			if _, ok := spec.Args[r]; !ok {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			bad(".args", "%s requires %s %s, which %s not given here", spec.Lookup,
				plural(len(missing), "argument", "arguments"), nameList(missing), plural(len(missing), "is", "are"))
		}
	}

	return progs, compileLookupJudge(env, block, spec, bad), problems
}

// compileLookupJudge compiles the condition a lookup's answer is judged
// by: an owner block's expect, a verify block's found (the other key is
// a problem there).
func compileLookupJudge(env *expr.Env, block string, spec *config.Lookup, bad func(key, format string, a ...any)) *expr.Program {
	judgeKey, judgeSrc, otherKey, otherSrc := ".expect", spec.Expect, ".found", spec.Found
	if block == "verify" {
		judgeKey, judgeSrc, otherKey, otherSrc = ".found", spec.Found, ".expect", spec.Expect
	}
	if otherSrc != "" {
		bad(otherKey, "is not used by %s; write the condition as %s", block, strings.TrimPrefix(judgeKey, "."))
	}
	if strings.TrimSpace(judgeSrc) == "" {
		bad(judgeKey, "is empty; write a CEL condition over result (the lookup's data), args and principal")
		return nil
	}
	p, err := env.CompileBool(judgeSrc)
	if err != nil {
		bad(judgeKey, "%v", err)
		return nil
	}
	return p
}

// Tool returns the compiled tool of that name.
func (v *Validator) Tool(name string) (*Compiled, bool) {
	c, ok := v.tools[name]
	return c, ok
}

// Names returns the tool names, sorted.
func (v *Validator) Names() []string { return slices.Clone(v.names) }

// Env returns the expression environment the tools were compiled with.
func (v *Validator) Env() *expr.Env { return v.env }
