-- The error that aborts a group-commit batch when a commit whose step was
-- taken earlier in the same batch is refused (its run's version moved, or
-- its operation is gone). The writer rolls the batch back and sends the
-- others again; the refused commit then runs alone. SQLSTATE TG001 is
-- toolgate's own: in the server log it reads as what it is, not as a
-- division by zero.
CREATE FUNCTION toolgate_refuse_commit() RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RAISE EXCEPTION 'toolgate: commit refused: the run or operation changed; the batch is rolled back and retried without it'
        USING ERRCODE = 'TG001';
END
$$;
