-- The canonical arguments of an operation, so that a verify read can be
-- built for it after a crash (toolgate reconcile).
ALTER TABLE operations ADD COLUMN args TEXT;
