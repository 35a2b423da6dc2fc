package bench_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate"
)

// seedHistory makes the history file at path: one real write call through
// a gateway makes the template rows (the hot run, an execution row and
// its operation), then SQL copies them historyRows times in one
// transaction, keys ascending in the order of every index so that each
// insert appends.
func seedHistory(path string) (err error) {
	ctx := context.Background()
	if err := templateCall(ctx, path); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	db.SetMaxOpenConns(1)
	for _, q := range seedSQL() {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("seeding %s: %.80s: %w", path, q, err)
		}
	}
	return nil
}

// templateCall creates the hot run in a fresh file at path and makes one
// write call on it.
func templateCall(ctx context.Context, path string) error {
	gw, closeAll, err := openGateway(path)
	if err != nil {
		return err
	}
	if _, err := gw.StartRun(ctx, toolgate.RunOptions{ID: historyRun, Principal: toolgate.Principal{ID: "u"}}); err != nil {
		closeAll()
		return err
	}
	res, err := gw.Do(ctx, &toolgate.Call{RunID: historyRun, Tool: "write", Args: []byte(`{"n":0}`), CallID: "c"})
	if err == nil && !res.OK {
		err = fmt.Errorf("template call: %s: %s", res.Error.Code, res.Error.Message)
	}
	if cerr := closeAll(); err == nil {
		err = cerr
	}
	return err
}

// seedSQL are the statements that copy the template rows. Row i (1 to
// historyRows) goes to run hist-NNNNN (historyRunSteps rows each) or, for
// the last historySteps rows, to the hot run; its operation key is
// hist:NNNNNNNNN, its arguments {"n":-i} (no benchmarked call repeats
// them), its times 1 ms apart ending before the template's.
func seedSQL() []string {
	others := historyRows - historySteps
	r := strings.NewReplacer(
		"$ROWS", fmt.Sprint(historyRows), "$OTHERS", fmt.Sprint(others),
		"$RUNS", fmt.Sprint(others/historyRunSteps-1), "$PER", fmt.Sprint(historyRunSteps),
		"$STEPS", fmt.Sprint(historySteps), "$HOT", historyRun, "$RESULT", historyResult)
	run := `CASE WHEN i <= $OTHERS THEN 'hist-' || (100000 + (i-1)/$PER) ELSE '$HOT' END`
	step := `CASE WHEN i <= $OTHERS THEN (i-1)%$PER+1 ELSE i-$OTHERS END`
	at := func(col string) string { return `(t.` + col + ` - ($ROWS - i + 1) * 1000000)` }
	qs := []string{
		`PRAGMA journal_mode=OFF`,
		`PRAGMA synchronous=OFF`,
		`PRAGMA cache_size=-262144`,
		`BEGIN`,
		`CREATE TEMP TABLE exec_t AS SELECT * FROM executions`,
		`CREATE TEMP TABLE op_t AS SELECT * FROM operations`,
		`DELETE FROM executions`,
		`DELETE FROM operations`,
		`INSERT INTO runs (id, owner, principal, state, initial_state, step, version, max_steps, created_at, updated_at)
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < $RUNS)
SELECT 'hist-' || (100000 + i), owner, principal, state, initial_state, $PER, $PER, 0, created_at, updated_at
FROM n, runs WHERE runs.id = '$HOT'`,
		`INSERT INTO executions (run_id, step, call_id, tool, dependency, args_hash, args, operation_key, code, ok,
side_effect, replayed, verified, attempts, retries, latency_ms, input_tokens, output_tokens, started_at, finished_at,
version, state_patch, result, trace_id)
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < $ROWS)
SELECT ` + run + `, ` + step + `, t.call_id, t.tool, t.dependency, 'hist' || (1000000000 + i), '{"n":-' || i || '}',
'hist:' || (1000000000 + i), t.code, t.ok, t.side_effect, t.replayed, t.verified, t.attempts, t.retries, t.latency_ms,
t.input_tokens, t.output_tokens, ` + at("started_at") + `, ` + at("started_at") + ` + (t.finished_at - t.started_at),
` + step + `, t.state_patch, '$RESULT', t.trace_id
FROM n, exec_t AS t`,
		`INSERT INTO operations ("key", args_hash, run_id, tool, status, result, owner, lease_until, created_at,
updated_at, completed_at, args)
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < $ROWS)
SELECT 'hist:' || (1000000000 + i), 'hist' || (1000000000 + i), ` + run + `, t.tool, t.status, '$RESULT', t.owner, t.lease_until,
` + at("created_at") + `, ` + at("created_at") + `, ` + at("created_at") + `, '{"n":-' || i || '}'
FROM n, (SELECT * FROM op_t LIMIT 1) AS t`,
		`UPDATE runs SET step = $STEPS, version = $STEPS WHERE id = '$HOT'`,
		`COMMIT`,
	}
	for i, q := range qs {
		qs[i] = r.Replace(q)
	}
	return qs
}

// historyResult is the envelope of every seeded row: a short one (a real
// envelope is about 370 bytes), so that 10 million rows and operations
// make a file of a few GB and seed in about a minute. The indexes, which
// are what a call's cost could grow with, are the same as with real rows.
const historyResult = `{"ok":true,"data":{"recorded":true}}`
