package execute

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/types"
)

// ArgumentError is an argument that cannot be placed in the request where
// the tool's template puts it: a path segment it would turn into ".", ".."
// or empty, or a header value it would break. The call is the model's to
// fix: nothing is sent, and the dependency's health is not in question.
type ArgumentError struct {
	// Arg names the argument ("" when no single argument is to blame).
	Arg string
	// Why says what is wrong with it.
	Why string
}

// Error says which argument and why.
func (e *ArgumentError) Error() string {
	if e.Arg == "" {
		return e.Why
	}
	return fmt.Sprintf("argument %q cannot be sent: %s", e.Arg, e.Why)
}

// argumentFailure is the failure of a request refused for one of its
// arguments: invalid_argument, not delivered, not transient.
func argumentFailure(a *Attempt, e *ArgumentError) *Failure {
	name := "the tool"
	if a != nil && a.Tool != nil && a.Tool.Name != "" {
		name = a.Tool.Name
	}
	return &Failure{
		Kind:    KindInvalidRequest,
		Code:    types.CodeInvalidArgument,
		Message: fmt.Sprintf("%s: %s; nothing was sent. Call it again with a corrected value", name, e.Error()),
		Err:     e,
	}
}

// headerValueProblem says why v cannot be sent as an HTTP header value as
// it is, or "" when it can: control characters (CR, LF, NUL, ... but not
// tab) would end or corrupt the header, and leading or trailing blanks are
// stripped by the receiver, so it would not see the value intact.
func headerValueProblem(v string) string {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return fmt.Sprintf("it holds the control character %q, which cannot be sent in the header", c)
		}
	}
	if strings.TrimLeft(v, " \t") != v || strings.TrimRight(v, " \t") != v {
		return "it begins or ends with a blank, which the header would not carry"
	}
	return ""
}

// checkOperationKeyHeader refuses an operation key that cannot be sent in
// the tool's idempotency header, naming the argument that put the bad
// bytes in it.
func checkOperationKeyHeader(a *Attempt) *ArgumentError {
	if a.Tool.Idempotency.Header == "" || a.OperationKey == "" {
		return nil
	}
	why := headerValueProblem(a.OperationKey)
	if why == "" {
		return nil
	}
	// The argument to name: one whose value is in the key and is itself
	// unsendable; the longest such value (the most specific), then by name.
	var names []string
	for name, v := range a.Args {
		text, err := scalarText(v)
		if err != nil || text == "" || !strings.Contains(a.OperationKey, text) {
			continue
		}
		if headerValueProblem(text) != "" {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, func(x, y string) int {
		tx, _ := scalarText(a.Args[x])
		ty, _ := scalarText(a.Args[y])
		if c := cmp.Compare(len(ty), len(tx)); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	e := &ArgumentError{Why: fmt.Sprintf("it goes into the operation key sent in the %s header, and %s", a.Tool.Idempotency.Header, why)}
	if len(names) == 0 {
		e.Why = "the operation key sent in the " + a.Tool.Idempotency.Header + " header cannot be sent: " + why
	} else {
		e.Arg = names[0]
	}
	return e
}
