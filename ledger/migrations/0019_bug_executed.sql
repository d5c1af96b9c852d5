-- 0019: whether a reproduction's test executed the bug where it failed on the buggy tree, from
-- the line trace of those executions (docs/sandbox.md#coverage): true, false (then it is not
-- reproduced), or NULL with the reason it could not be measured. Older rows: NULL, no reason.
ALTER TABLE reproductions ADD COLUMN bug_executed BOOLEAN;
ALTER TABLE reproductions ADD COLUMN coverage_reason VARCHAR;
