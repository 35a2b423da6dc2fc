package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/toolgate/toolgate/expr"
)

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// normalize fills in the tool's defaults and returns every problem with
// its entry, in the order of the entry's keys.
func (t *Tool) normalize(c *Config) []*Problem {
	var ps []*Problem
	bad := func(key, format string, args ...any) {
		ps = append(ps, &Problem{Key: key, Why: fmt.Sprintf(format, args...)})
	}
	t.normalizeIdentity(bad)
	t.normalizeCall(c, bad)
	t.normalizeBudgets(bad)
	if t.Idempotency.Header != "" && t.Effect != "write" && t.Effect != "idempotent" {
		bad("idempotency.header", "only writes send an idempotency key (effect is %s)", t.Effect)
	}
	t.normalizeSchemas(bad)
	t.normalizeRules(bad)
	t.checkLookups(c, bad)
	return ps
}

// normalizeIdentity checks what the model reads of the tool, its name and
// description, and its effect, which defaults to write.
func (t *Tool) normalizeIdentity(bad func(key, format string, args ...any)) {
	if !toolName.MatchString(t.Name) {
		bad("", "tool names must be 1-64 letters, digits, _ or - (model APIs require it)")
	}
	if t.Description == "" {
		bad("description", "a tool needs a description: it is what the model reads to choose it")
	}
	switch t.Effect {
	case "":
		t.Effect = "write"
	case "read", "idempotent", "write":
	default:
		bad("effect", "%q is not an effect: use read, idempotent or write", t.Effect)
	}
}

// normalizeBudgets fills in and checks what bounds one call: the connect
// and read timeouts, the retry policy, the total timeout (derived from the
// other three when unset) and the observation size.
func (t *Tool) normalizeBudgets(bad func(key, format string, args ...any)) {
	if t.Timeout.Connect == 0 {
		t.Timeout.Connect = Duration(DefaultConnectTimeout)
	}
	if t.Timeout.Read == 0 {
		t.Timeout.Read = Duration(DefaultReadTimeout)
	}
	if t.Retry.MaxAttempts == 0 {
		t.Retry.MaxAttempts = DefaultMaxAttempts
	} else if t.Retry.MaxAttempts < 0 || t.Retry.MaxAttempts > 20 {
		bad("retry.max_attempts", "%d must be between 1 and 20", t.Retry.MaxAttempts)
	}
	if t.Retry.Base == 0 {
		t.Retry.Base = Duration(DefaultRetryBase)
	}
	if t.Retry.Cap == 0 {
		t.Retry.Cap = Duration(DefaultRetryCap)
	}
	if t.Retry.Cap < t.Retry.Base {
		bad("retry.cap", "%s is below retry.base %s", t.Retry.Cap, t.Retry.Base)
	}
	if t.Timeout.Total == 0 {
		t.Timeout.Total = Duration(t.defaultTotal())
	}
	if t.MaxObservationBytes == 0 {
		t.MaxObservationBytes = DefaultMaxObservationBytes
	} else if t.MaxObservationBytes < 256 {
		bad("max_observation_bytes", "%d is too small to say anything useful (at least 256)", t.MaxObservationBytes)
	}
}

// normalizeSchemas gives a tool without an input schema one that takes no
// arguments, and makes the numbers of both schemas JSON numbers.
func (t *Tool) normalizeSchemas(bad func(key, format string, args ...any)) {
	if t.InputSchema == nil {
		t.InputSchema = map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false}
	} else {
		s, err := jsonNumbers(t.InputSchema)
		if err != nil {
			bad("input_schema", "%v", err)
		} else {
			t.InputSchema = s
		}
	}
	if t.OutputSchema != nil {
		if s, err := jsonNumbers(t.OutputSchema); err != nil {
			bad("output_schema", "%v", err)
		} else {
			t.OutputSchema = s
		}
	}
}

// normalizeCall checks how the tool is called: an MCP tool takes no
// request; an HTTP tool needs a declared dependency and a request, whose
// method it defaults to POST; a Go tool naming an undeclared dependency
// (for its breaker) gets one with the defaults.
func (t *Tool) normalizeCall(c *Config, bad func(key, format string, args ...any)) {
	if t.Func == nil && c.Dependencies[t.Dependency].sourceKind() == SourceMCP {
		// An MCP tool: tools/call on the server, no request to build.
		if t.Request != nil {
			bad("request", "an MCP tool is called with tools/call; it takes no request")
		}
	} else if t.Func == nil {
		if t.Dependency == "" {
			bad("dependency", "an HTTP tool needs a dependency")
		} else if c.Dependencies[t.Dependency] == nil {
			bad("dependency", "no dependency named %q%s (have: %s)", t.Dependency, didYouMean(t.Dependency, sortedKeys(c.Dependencies)), strings.Join(sortedKeys(c.Dependencies), ", "))
		}
		if t.Request == nil {
			bad("request", "an HTTP tool needs request: {method, path}")
		} else {
			t.Request.Method = strings.ToUpper(t.Request.Method)
			switch t.Request.Method {
			case "":
				t.Request.Method = "POST"
			case "GET", "POST", "PUT", "PATCH", "DELETE":
			case "HEAD":
				if t.Request.Params == nil {
					bad("request.method", "HEAD is supported for operations imported from an OpenAPI document only")
				}
			default:
				bad("request.method", "%q is not supported (GET, POST, PUT, PATCH, DELETE)", t.Request.Method)
			}
			if !strings.HasPrefix(t.Request.Path, "/") {
				bad("request.path", "%q must start with /", t.Request.Path)
			}
		}
	} else if t.Dependency != "" && c.Dependencies[t.Dependency] == nil {
		// A Go tool may name a dependency only for its breaker.
		c.Dependencies[t.Dependency] = &Dependency{Name: t.Dependency,
			Breaker:     Breaker{Threshold: DefaultBreakerThreshold, Cooldown: Duration(DefaultBreakerCooldown)},
			RetryBudget: RetryBudget{Ratio: DefaultRetryBudgetRatio, MinRetries: DefaultRetryBudgetMin}}
	}
}

// normalizeRules checks each rule's deny expression and message and fills
// in its default code.
func (t *Tool) normalizeRules(bad func(key, format string, args ...any)) {
	for i, r := range t.Rules {
		if r.Deny == "" {
			bad(fmt.Sprintf("rules[%d].deny", i), "a rule needs a deny expression")
		}
		if r.Code == "" {
			if r.Approval {
				t.Rules[i].Code = "approval_required"
			} else {
				t.Rules[i].Code = "rule_denied"
			}
		}
		if r.Message == "" {
			bad(fmt.Sprintf("rules[%d].message", i), "a rule needs a message telling the model what to do instead")
		}
	}
}

// checkLookups checks the owner and verify lookups: each names a read tool
// and has its CEL expression.
func (t *Tool) checkLookups(c *Config, bad func(key, format string, args ...any)) {
	for _, l := range []struct {
		key  string
		l    *Lookup
		want string
	}{{"owner", t.Owner, t.Owner.expect()}, {"verify", t.Verify, t.Verify.found()}} {
		if l.l == nil {
			continue
		}
		if l.l.Lookup == "" {
			bad(l.key+".lookup", "names the read tool to call")
		} else if lt := c.Tools[l.l.Lookup]; lt == nil {
			if !c.ImportsPending() { // else it may be imported: Imported checks it
				bad(l.key+".lookup", "no tool named %q%s", l.l.Lookup, didYouMean(l.l.Lookup, sortedKeys(c.Tools)))
			}
		} else if lt.Effect != "read" {
			bad(l.key+".lookup", "%q must have effect read", l.l.Lookup)
		}
		if l.want == "" {
			word := map[string]string{"owner": "expect", "verify": "found"}[l.key]
			bad(l.key+"."+word, "a CEL expression over result is required")
		}
	}
}

func (l *Lookup) expect() string {
	if l == nil {
		return ""
	}
	return l.Expect
}

func (l *Lookup) found() string {
	if l == nil {
		return ""
	}
	return l.Found
}

// defaultTotal is every attempt's connect and read time plus twice the
// un-jittered backoffs between them (jitter stretches a wait to 1.5x at most).
func (t *Tool) defaultTotal() time.Duration {
	n := t.Retry.MaxAttempts
	if n < 1 {
		n = 1
	}
	total := time.Duration(n) * (t.Timeout.Connect.D() + t.Timeout.Read.D())
	wait := t.Retry.Base.D()
	for i := 1; i < n; i++ {
		total += 2 * min(wait, t.Retry.Cap.D())
		wait *= 2
	}
	return total
}

// didYouMean is "; did you mean X?" when a name is close to X, else "".
func didYouMean(name string, candidates []string) string {
	if s := expr.Suggest(name, candidates); s != "" {
		return "; did you mean " + s + "?"
	}
	return ""
}
