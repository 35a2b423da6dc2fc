-- 0005: fewer index entries per recorded call on the ledger.
--
-- Every write call inserts one operation (started) and settles it
-- (completed). A settlement changes status, which the indexes reference,
-- so it is never a HOT update: each index the new row falls in gets an
-- entry. Before: four on the insert (primary key, operations_status,
-- operations_started_lease, operations_started_owner) and three on the
-- settlement (primary key, operations_status,
-- operations_completed_updated). After: two and two.
--
-- operations_status (status, created_at, seq) held every row, but only
-- the lists of unknown and of started operations read it: unknown
-- operations now have a partial index of their own, and started ones, few
-- (the calls in flight and the leases not yet expired), are read through
-- the one partial index of started operations, which serves ExpireLeases
-- (lease_until), AbandonOwner and the fencer's owners (owner) alike.
--
-- Cost on an existing database: the two CREATE INDEX read the whole
-- operations table once each, writes waiting meanwhile (docs/upgrade.md).
DROP INDEX operations_status;
DROP INDEX operations_started_lease;
DROP INDEX operations_started_owner;
CREATE INDEX operations_started ON operations (lease_until, owner) WHERE status = 'started';
CREATE INDEX operations_unknown ON operations (created_at, seq) WHERE status = 'unknown';
