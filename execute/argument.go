package execute

import (
	"fmt"

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
