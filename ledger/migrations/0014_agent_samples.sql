-- 0014: an agent sampled k times per case (`--agent-samples`): each sample's reproduction,
-- agent execution, verdict and judge call names its sample (0-based; 0 for every older row,
-- which was the one sample of its case). Aggregates take the case as the unit
-- (docs/agents.md#samples).
ALTER TABLE reproductions ADD COLUMN sample BIGINT DEFAULT 0;
ALTER TABLE agent_runs ADD COLUMN sample BIGINT DEFAULT 0;
ALTER TABLE verdicts ADD COLUMN sample BIGINT DEFAULT 0;
ALTER TABLE judge_calls ADD COLUMN agent_sample BIGINT DEFAULT 0;
ALTER TABLE observations ADD COLUMN sample BIGINT;
