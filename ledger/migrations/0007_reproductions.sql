-- 0007: per case and agent version, what the reproduction test showed; its history.
CREATE TABLE reproductions (
    run_id VARCHAR NOT NULL,
    case_id VARCHAR NOT NULL,
    case_hash VARCHAR,
    agent_version VARCHAR NOT NULL,
    outcome VARCHAR NOT NULL,
    reason VARCHAR,
    test_hash VARCHAR,
    report_words BIGINT,
    category VARCHAR,
    created_at TIMESTAMP NOT NULL
);

-- Reproduction rate per run and agent version, flaky cases out of the rate
-- (DESIGN §5), with a Wilson 95% interval (macros from 0004).
CREATE VIEW repro_history AS
SELECT
    r.run_id,
    min(r.created_at) AS run_at,
    r.agent_version,
    count(*) AS cases,
    count(*) FILTER (WHERE outcome = 'reproduced') AS reproduced,
    count(*) FILTER (WHERE outcome = 'not_reproduced') AS not_reproduced,
    count(*) FILTER (WHERE outcome = 'flaky') AS flaky,
    count(*) FILTER (WHERE outcome = 'error') AS error,
    CASE WHEN count(*) FILTER (WHERE outcome IN ('reproduced', 'not_reproduced')) > 0
        THEN count(*) FILTER (WHERE outcome = 'reproduced')
            / count(*) FILTER (WHERE outcome IN ('reproduced', 'not_reproduced')) END AS rate,
    wilson_low(count(*) FILTER (WHERE outcome = 'reproduced'),
        count(*) FILTER (WHERE outcome IN ('reproduced', 'not_reproduced'))) AS ci_low,
    wilson_high(count(*) FILTER (WHERE outcome = 'reproduced'),
        count(*) FILTER (WHERE outcome IN ('reproduced', 'not_reproduced'))) AS ci_high
FROM reproductions r
GROUP BY r.run_id, r.agent_version;

-- Candidate win rate per run over decisive pairs, with a Wilson 95% interval.
CREATE VIEW win_rate_history AS
SELECT
    run_id,
    min(created_at) AS run_at,
    any_value(strategy) AS strategy,
    any_value(baseline) AS baseline,
    any_value(candidate) AS candidate,
    count(*) AS pairs,
    count(*) FILTER (WHERE outcome = 'candidate') AS candidate_wins,
    count(*) FILTER (WHERE outcome = 'baseline') AS baseline_wins,
    count(*) FILTER (WHERE outcome = 'tie') AS ties,
    count(*) FILTER (WHERE outcome = 'unscored') AS unscored,
    count(*) FILTER (WHERE outcome IN ('candidate', 'baseline')) AS decisive,
    CASE WHEN count(*) FILTER (WHERE outcome IN ('candidate', 'baseline')) > 0
        THEN count(*) FILTER (WHERE outcome = 'candidate')
            / count(*) FILTER (WHERE outcome IN ('candidate', 'baseline')) END AS win_rate,
    wilson_low(count(*) FILTER (WHERE outcome = 'candidate'),
        count(*) FILTER (WHERE outcome IN ('candidate', 'baseline'))) AS ci_low,
    wilson_high(count(*) FILTER (WHERE outcome = 'candidate'),
        count(*) FILTER (WHERE outcome IN ('candidate', 'baseline'))) AS ci_high
FROM verdicts
GROUP BY run_id;
