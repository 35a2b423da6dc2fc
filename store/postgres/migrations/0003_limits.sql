-- Limits that hold under parallel calls: a run's state-writer slot (at
-- most one call that reads or changes the run's state in flight, on any
-- replica), and quota reservations (limits shared across runs and
-- replicas over a sliding window).
CREATE TABLE state_writers (
    run_id      text    NOT NULL,
    holder      text    NOT NULL,
    owner       text    NOT NULL,
    lease_until bigint  NOT NULL,
    shared      boolean NOT NULL,
    PRIMARY KEY (run_id, holder)
);
CREATE INDEX state_writers_owner ON state_writers (owner);
CREATE TABLE quota_reservations (
    id     bigserial PRIMARY KEY,
    quota  text      NOT NULL,
    "key"  text      NOT NULL,
    op_key text      NOT NULL,
    amount bigint    NOT NULL,
    at     bigint    NOT NULL
);
CREATE INDEX quota_reservations_window ON quota_reservations (quota, "key", at);
CREATE INDEX quota_reservations_op ON quota_reservations (op_key);
