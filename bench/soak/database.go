package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/toolgate/toolgate/store/storeurl"
	"github.com/toolgate/toolgate/types"
)

// database is what the server left in its SQLite file.
type database struct {
	// rows are the execution rows.
	rows []types.Execution
	// ledger is each operation's record, by the order it refunds.
	ledger map[string]types.Operation
	// byStatus counts the ledger's records by status.
	byStatus map[types.OpStatus]int
}

// readDatabase opens the SQLite file the server has exited from and reads
// its rows and ledger.
func readDatabase(ctx context.Context, path string) (*database, error) {
	st, err := storeurl.Open(ctx, "sqlite:"+path, storeurl.Options{})
	if err != nil {
		return nil, fmt.Errorf("soak: open %s: %w", path, err)
	}
	defer st.Close()
	db := &database{ledger: map[string]types.Operation{}, byStatus: map[types.OpStatus]int{}}
	if db.rows, err = st.ListExecutions(ctx, types.ExecutionFilter{Limit: math.MaxInt32, Ascending: true}); err != nil {
		return nil, fmt.Errorf("soak: list executions: %w", err)
	}
	for _, status := range []types.OpStatus{types.OpStarted, types.OpUnknown, types.OpCompleted} {
		ops, err := st.ListOperations(ctx, status, math.MaxInt32)
		if err != nil {
			return nil, fmt.Errorf("soak: list %s operations: %w", status, err)
		}
		for _, op := range ops {
			var args struct {
				OrderID string `json:"order_id"`
			}
			if err := json.Unmarshal(op.Args, &args); err != nil || args.OrderID == "" {
				return nil, fmt.Errorf("soak: operation %s: arguments %s without an order", op.Key, op.Args)
			}
			if prev, dup := db.ledger[args.OrderID]; dup {
				return nil, fmt.Errorf("soak: order %s has two operations in the ledger: %s and %s", args.OrderID, prev.Key, op.Key)
			}
			db.ledger[args.OrderID] = op
			db.byStatus[status]++
		}
	}
	return db, nil
}
