-- 0001: runs, the execution log and the operation ledger.
--
-- Times are unix nanoseconds (UTC) in INTEGER columns, 0 for "not set".
-- JSON is TEXT kept byte for byte: numbers never go through a float.

CREATE TABLE runs (
    id            TEXT PRIMARY KEY,
    owner         TEXT NOT NULL,
    principal     TEXT NOT NULL,
    state         TEXT,
    initial_state TEXT,
    step          INTEGER NOT NULL,
    version       INTEGER NOT NULL,
    max_steps     INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
) STRICT;

-- One row per call. The id orders rows in commit order.
CREATE TABLE executions (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id        TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step          INTEGER NOT NULL,
    call_id       TEXT NOT NULL,
    tool          TEXT NOT NULL,
    dependency    TEXT NOT NULL,
    args_hash     TEXT NOT NULL,
    args          TEXT,
    operation_key TEXT NOT NULL,
    code          TEXT NOT NULL,
    ok            INTEGER NOT NULL,
    side_effect   TEXT NOT NULL,
    replayed      INTEGER NOT NULL,
    verified      INTEGER NOT NULL,
    attempts      INTEGER NOT NULL,
    retries       INTEGER NOT NULL,
    latency_ms    REAL NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    started_at    INTEGER NOT NULL,
    finished_at   INTEGER NOT NULL,
    version       INTEGER NOT NULL,
    state_patch   TEXT,
    result        TEXT,
    trace_id      TEXT NOT NULL
) STRICT;

CREATE INDEX executions_run_version ON executions (run_id, version);
CREATE INDEX executions_tool_finished ON executions (tool, finished_at);
CREATE INDEX executions_finished ON executions (finished_at);

-- The ledger. The primary key on "key" is the arbiter of "exactly once":
-- of two concurrent BeginOperation calls, only one INSERT lands.
CREATE TABLE operations (
    "key"        TEXT PRIMARY KEY,
    args_hash    TEXT NOT NULL,
    run_id       TEXT NOT NULL,
    tool         TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('started', 'completed', 'unknown')),
    result       TEXT,
    owner        TEXT NOT NULL,
    lease_until  INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    completed_at INTEGER NOT NULL
) STRICT;

CREATE INDEX operations_status ON operations (status, created_at);
