-- Approvals: a person's decision bound to one exact action.
CREATE TABLE approvals (
    id             text   PRIMARY KEY,
    tool           text   NOT NULL,
    args_hash      text   NOT NULL,
    args           json   NOT NULL,
    principal_id   text   NOT NULL,
    run_id         text   NOT NULL,
    config_version text   NOT NULL,
    rule           text   NOT NULL,
    reason         text   NOT NULL,
    status         text   NOT NULL,
    decided_by     text   NOT NULL DEFAULT '',
    comment        text   NOT NULL DEFAULT '',
    created_at     bigint NOT NULL,
    decided_at     bigint NOT NULL DEFAULT 0,
    expires_at     bigint NOT NULL,
    used_by        text   NOT NULL DEFAULT ''
);
CREATE INDEX approvals_binding ON approvals (tool, args_hash, principal_id, config_version, created_at);
CREATE INDEX approvals_status ON approvals (status, created_at);
