-- Approvals: a person's decision bound to one exact action.
CREATE TABLE approvals (
    id             TEXT    PRIMARY KEY,
    tool           TEXT    NOT NULL,
    args_hash      TEXT    NOT NULL,
    args           TEXT    NOT NULL,
    principal_id   TEXT    NOT NULL,
    run_id         TEXT    NOT NULL,
    config_version TEXT    NOT NULL,
    rule           TEXT    NOT NULL,
    reason         TEXT    NOT NULL,
    status         TEXT    NOT NULL,
    decided_by     TEXT    NOT NULL DEFAULT '',
    comment        TEXT    NOT NULL DEFAULT '',
    created_at     INTEGER NOT NULL,
    decided_at     INTEGER NOT NULL DEFAULT 0,
    expires_at     INTEGER NOT NULL,
    used_by        TEXT    NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX approvals_binding ON approvals (tool, args_hash, principal_id, config_version, created_at);
CREATE INDEX approvals_status ON approvals (status, created_at);
