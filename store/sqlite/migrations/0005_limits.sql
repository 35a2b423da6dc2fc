-- Limits that hold under parallel calls: a run's state-writer slot (at
-- most one call that reads or changes the run's state in flight), and
-- quota reservations (limits shared across runs over a sliding window).
CREATE TABLE state_writers (
    run_id      TEXT    NOT NULL,
    holder      TEXT    NOT NULL,
    owner       TEXT    NOT NULL,
    lease_until INTEGER NOT NULL,
    shared      INTEGER NOT NULL,
    PRIMARY KEY (run_id, holder)
) STRICT;
CREATE INDEX state_writers_owner ON state_writers (owner);
CREATE TABLE quota_reservations (
    quota  TEXT    NOT NULL,
    "key"  TEXT    NOT NULL,
    op_key TEXT    NOT NULL,
    amount INTEGER NOT NULL,
    at     INTEGER NOT NULL
) STRICT;
CREATE INDEX quota_reservations_window ON quota_reservations (quota, "key", at);
CREATE INDEX quota_reservations_op ON quota_reservations (op_key);
