package sqlq

import (
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/types"
)

// Queries are the statements both stores run, in one dialect's form: built
// once, at start-up (Dialect.Queries). The executions' SELECT has no fixed
// text: see ListExecutionsQuery.
type Queries struct {
	// InsertApproval inserts an approval (ApprovalArgs).
	InsertApproval string
	// DecideApproval decides a pending, unexpired approval
	// (DecideApprovalArgs).
	DecideApproval string

	// InsertRun inserts a run unless its id exists (RunArgs).
	InsertRun string

	// BeginOperation inserts an operation as started unless its key
	// exists (BeginArgs).
	BeginOperation string
	// SelectOperation reads the operation of a key (ScanOperation).
	SelectOperation string

	// PruneExecutions deletes at most $2 executions that finished before
	// $1.
	PruneExecutions string
	// PruneStats deletes the stats buckets that start before $1.
	PruneStats string
	// UpsertStats inserts or replaces a stats bucket by (tool, start,
	// replica).
	UpsertStats string

	selectApproval, findApproval, listApprovals string
	listOperations                              string
	// listOperationsIn are listOperations with each of the ledger's
	// statuses written in the statement, so that PostgreSQL plans it on
	// that status's partial index (a generic plan of "status = $1" could
	// use none).
	listOperationsIn          map[types.OpStatus]string
	selectWriters, quotaUsage string
	quotaUsed, quotaFrees     string
	selectRun                 string
}

// queriesFor binds the statements to d.
func queriesFor(d *Dialect) *Queries {
	return &Queries{
		InsertApproval:  d.Bind(insertApprovalSQL),
		DecideApproval:  d.Bind(decideApprovalSQL),
		selectApproval:  d.Bind(selectApprovalSQL),
		findApproval:    d.Bind(findApprovalSQL),
		listApprovals:   d.Bind(listApprovalsSQL),
		InsertRun:       d.Bind(insertRunSQL),
		selectRun:       d.Bind(selectRunSQL),
		BeginOperation:  d.Bind(BeginOperationSQL),
		SelectOperation: d.Bind(SelectOperationSQL),
		listOperations:  d.Bind(fmt.Sprintf(listOperationsSQL, d.insertionOrder)),
		listOperationsIn: map[types.OpStatus]string{
			types.OpStarted:   listOperationsIn(d, types.OpStarted),
			types.OpCompleted: listOperationsIn(d, types.OpCompleted),
			types.OpUnknown:   listOperationsIn(d, types.OpUnknown),
		},
		PruneExecutions: d.Bind(pruneExecutionsSQL),
		PruneStats:      d.Bind(pruneStatsSQL),
		UpsertStats:     d.Bind(upsertStatsSQL),
		selectWriters:   d.Bind(selectWritersSQL),
		quotaUsage:      d.Bind(quotaUsageSQL),
		quotaUsed:       d.Bind(quotaUsedSQL),
		quotaFrees:      d.Bind(fmt.Sprintf(quotaFreesSQL, d.reservationOrder)),
	}
}

// listOperationsIn is listOperations for one status, written in the
// statement: its one argument is the limit.
func listOperationsIn(d *Dialect, status types.OpStatus) string {
	q := strings.Replace(listOperationsSQL, "status = $1", "status = '"+string(status)+"'", 1)
	q = strings.Replace(q, "LIMIT $2", "LIMIT $1", 1)
	return d.Bind(fmt.Sprintf(q, d.insertionOrder))
}
