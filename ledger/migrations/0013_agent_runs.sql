-- 0013: what each agent execution took (time, model requests, tokens, cost as its gateway saw them),
-- and per run and agent version its cost next to what it reproduced.
CREATE TABLE agent_runs (
    run_id VARCHAR NOT NULL,
    case_id VARCHAR NOT NULL,
    case_hash VARCHAR,
    agent_version VARCHAR NOT NULL,
    seconds DOUBLE NOT NULL,
    ended VARCHAR NOT NULL,
    requests BIGINT NOT NULL,
    refused BIGINT NOT NULL,
    tunnels BIGINT NOT NULL,
    tokens_in BIGINT,
    tokens_out BIGINT,
    cost DOUBLE,
    model VARCHAR,
    created_at TIMESTAMP NOT NULL
);

-- Cost per run and agent version, and per reproduced bug (a version that reproduced
-- nothing has no cost per bug, never a division by zero).
CREATE VIEW agent_costs AS
WITH spent AS (
    SELECT run_id, agent_version,
        count(*) AS executions,
        sum(seconds) AS agent_seconds,
        sum(requests) AS requests,
        sum(refused) AS refused,
        sum(tunnels) AS tunnels,
        sum(tokens_in) AS tokens_in,
        sum(tokens_out) AS tokens_out,
        sum(cost) AS cost
    FROM agent_runs
    GROUP BY run_id, agent_version
), found AS (
    SELECT run_id, agent_version, count(*) FILTER (WHERE outcome = 'reproduced') AS reproduced
    FROM reproductions
    GROUP BY run_id, agent_version
)
SELECT s.*, coalesce(f.reproduced, 0) AS reproduced,
    CASE WHEN coalesce(f.reproduced, 0) > 0 AND s.cost IS NOT NULL
        THEN s.cost / f.reproduced END AS cost_per_reproduced
FROM spent s
LEFT JOIN found f USING (run_id, agent_version);
