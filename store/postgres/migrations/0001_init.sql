-- 0001: runs, the execution log, the operation ledger and the monitoring
-- aggregates.
--
-- Times are unix nanoseconds (UTC) in bigint columns, 0 for "not set": the
-- nanoseconds survive, where timestamptz keeps microseconds.
-- JSON documents are "json", never "jsonb": json keeps the text byte for
-- byte (key order, whitespace, 9007199254740993), jsonb would reformat it.
-- The tables are created in the first schema of the search_path (the
-- store's Options.Schema when set).

CREATE TABLE runs (
    id            text PRIMARY KEY,
    owner         text   NOT NULL,
    principal     json   NOT NULL,
    state         json,
    initial_state json,
    step          bigint NOT NULL,
    version       bigint NOT NULL,
    max_steps     bigint NOT NULL,
    created_at    bigint NOT NULL,
    updated_at    bigint NOT NULL
);

-- One row per call. Within a run, ids grow with the version (the run's row
-- is locked from the version's UPDATE to the COMMIT); across runs they are
-- taken at INSERT, so they follow commit order only roughly.
CREATE TABLE executions (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id        text    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step          bigint  NOT NULL,
    call_id       text    NOT NULL,
    tool          text    NOT NULL,
    dependency    text    NOT NULL,
    args_hash     text    NOT NULL,
    args          json,
    operation_key text    NOT NULL,
    code          text    NOT NULL,
    ok            boolean NOT NULL,
    side_effect   text    NOT NULL,
    replayed      boolean NOT NULL,
    verified      boolean NOT NULL,
    attempts      bigint  NOT NULL,
    retries       bigint  NOT NULL,
    latency_ms    double precision NOT NULL,
    input_tokens  bigint  NOT NULL,
    output_tokens bigint  NOT NULL,
    started_at    bigint  NOT NULL,
    finished_at   bigint  NOT NULL,
    version       bigint  NOT NULL,
    state_patch   json,
    result        json,
    trace_id      text    NOT NULL
);

CREATE INDEX executions_run_version ON executions (run_id, version);
CREATE INDEX executions_tool_id ON executions (tool, id);
CREATE INDEX executions_finished ON executions (finished_at);

-- The ledger. The primary key on "key" is the arbiter of "exactly once": of
-- concurrent INSERT ... ON CONFLICT DO NOTHING, on any replica, one lands.
-- seq orders operations created at the same instant by insertion.
CREATE TABLE operations (
    "key"        text   PRIMARY KEY,
    seq          bigint GENERATED ALWAYS AS IDENTITY,
    args_hash    text   NOT NULL,
    args         json,
    run_id       text   NOT NULL,
    tool         text   NOT NULL,
    status       text   NOT NULL CHECK (status IN ('started', 'completed', 'unknown')),
    result       json,
    owner        text   NOT NULL,
    lease_until  bigint NOT NULL,
    created_at   bigint NOT NULL,
    updated_at   bigint NOT NULL,
    completed_at bigint NOT NULL
);

CREATE INDEX operations_status ON operations (status, created_at, seq);
-- ExpireLeases and AbandonOwner look at started operations only.
CREATE INDEX operations_started_lease ON operations (lease_until) WHERE status = 'started';
CREATE INDEX operations_started_owner ON operations (owner) WHERE status = 'started';
-- Prune looks at completed operations only.
CREATE INDEX operations_completed_updated ON operations (updated_at) WHERE status = 'completed';

-- Monitoring aggregates: one row per (tool, bucket start, replica); data is
-- package monitor's encoding.
CREATE TABLE stats_buckets (
    tool    text   NOT NULL,
    start   bigint NOT NULL,
    width   bigint NOT NULL,
    replica text   NOT NULL,
    data    bytea  NOT NULL,
    PRIMARY KEY (tool, start, replica)
);
CREATE INDEX stats_buckets_start ON stats_buckets (start);
