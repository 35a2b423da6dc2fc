-- Monitoring aggregates: one row per (tool, bucket start, replica); the
-- data is package monitor's encoding.
CREATE TABLE stats_buckets (
    tool     TEXT    NOT NULL,
    start    INTEGER NOT NULL,
    width    INTEGER NOT NULL,
    replica  TEXT    NOT NULL,
    data     BLOB    NOT NULL,
    PRIMARY KEY (tool, start, replica)
) STRICT, WITHOUT ROWID;
CREATE INDEX stats_buckets_start ON stats_buckets (start);
