package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// ErrApprovalDecided: DecideApproval on an approval that is no longer
// pending (decided already, or expired).
var ErrApprovalDecided = errors.New("store: approval already decided or expired")

// ApprovalStatus is the state of an approval request.
type ApprovalStatus string

// The approval statuses.
const (
	ApprovalPending  ApprovalStatus = "pending"
	ApprovalApproved ApprovalStatus = "approved"
	ApprovalDenied   ApprovalStatus = "denied"
)

// Approval is a person's decision about one exact action: the tool, the
// canonical arguments, the principal and the config version that judged it.
// Any other arguments, another config or a later time need a new one.
type Approval struct {
	ID            string          `json:"id"`
	Tool          string          `json:"tool"`
	ArgsHash      string          `json:"args_hash"`
	Args          json.RawMessage `json:"args"`
	PrincipalID   string          `json:"principal_id"`
	RunID         string          `json:"run_id"`
	ConfigVersion string          `json:"config_version"`
	// Rule is the code of the rule that asked for approval; Reason its
	// message.
	Rule   string         `json:"rule"`
	Reason string         `json:"reason"`
	Status ApprovalStatus `json:"status"`
	By     string         `json:"by,omitempty"`
	// ByKey is the name of the API key that decided it, beside the
	// free-text By ("" in development mode and from the command line).
	ByKey     string    `json:"by_key,omitempty"`
	Comment   string    `json:"comment,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	ExpiresAt time.Time `json:"expires_at"`
	// UsedBy is the operation key of the call the approval let through: an
	// approval admits one operation (repeats of it are the ledger's job).
	UsedBy string `json:"used_by,omitempty"`
}

// Binding is what an approval is bound to: the exact action and the run
// that asked for it. An approval is usable only from that run: another
// run, even one asserting the same principal, is another request.
type Binding struct {
	Tool, ArgsHash, PrincipalID, ConfigVersion, RunID string
}

// Binding returns the approval's binding.
func (a *Approval) Binding() Binding {
	return Binding{Tool: a.Tool, ArgsHash: a.ArgsHash, PrincipalID: a.PrincipalID, ConfigVersion: a.ConfigVersion, RunID: a.RunID}
}

// ApprovalStore keeps approvals (part of Store): the rules with
// `approval: true` need it.
type ApprovalStore interface {
	// CreateApproval inserts a pending approval.
	CreateApproval(ctx context.Context, a *Approval) error
	// GetApproval returns one approval, or ErrNotFound.
	GetApproval(ctx context.Context, id string) (*Approval, error)
	// FindApproval returns the newest approval with exactly this binding,
	// or ErrNotFound.
	FindApproval(ctx context.Context, b Binding) (*Approval, error)
	// DecideApproval sets a pending, unexpired approval to approved or
	// denied; otherwise ErrApprovalDecided (or ErrNotFound). by is the
	// decider as Decider encodes it (a plain name is one too).
	DecideApproval(ctx context.Context, id string, status ApprovalStatus, by, comment string, at time.Time) (*Approval, error)
	// UseApproval binds an approved approval to the operation it admits. It
	// reports true when the approval was unused or is already bound to
	// opKey, false when another operation took it.
	UseApproval(ctx context.Context, id, opKey string) (bool, error)
	// ListApprovals returns approvals in a status ("" for all), newest first.
	ListApprovals(ctx context.Context, status ApprovalStatus, limit int) ([]Approval, error)
}

// deciderSeparator joins the free-text decider and the deciding key's name
// in one stored value: the approvals table keeps them in its one
// decided_by column, so recording the key needed no schema change. The
// server refuses control characters in the free text, so the separator
// cannot come from it.
const deciderSeparator = "\x1f"

// Decider encodes who decided an approval, the free text and the API
// key's name, as DecideApproval takes it.
func Decider(by, key string) string {
	if key == "" {
		return by
	}
	return by + deciderSeparator + key
}

// SplitDecider reads back what Decider encoded: the free text and the
// key's name ("" for a value stored without one).
func SplitDecider(stored string) (by, key string) {
	by, key, _ = strings.Cut(stored, deciderSeparator)
	return by, key
}
