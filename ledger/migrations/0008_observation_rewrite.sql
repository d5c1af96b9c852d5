-- 0008: sandbox executions on a behaviour-preserving rewrite of a tree carry
-- the rewrite's seed; NULL for an execution on the tree as the agent saw it.
-- Rewritten executions are a check, not flake evidence (docs/sandbox.md).
ALTER TABLE observations ADD COLUMN rewrite BIGINT;

-- A reproduced bug's symptom: 'fail', or 'hang' (every buggy execution hit
-- the per-test deadline, the clean tree passed well under it).
ALTER TABLE reproductions ADD COLUMN symptom VARCHAR;
