-- 0011: the history views carry each run's kind (nightly, pr, ingest, adhoc), so a
-- trend keeps to one kind: a PR run is never a point of the nightly trend
-- (docs/report.md#history). `kind` is null for rows of a run without a `runs` row.

-- A run's kind, from its first `runs` row (a run's kind never changes).
CREATE VIEW run_kinds AS
SELECT run_id, arg_min(kind, recorded_at) AS kind
FROM runs
GROUP BY run_id;

-- As in 0007, with the run's kind as the last column.
CREATE OR REPLACE VIEW repro_history AS
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
        count(*) FILTER (WHERE outcome IN ('reproduced', 'not_reproduced'))) AS ci_high,
    k.kind
FROM reproductions r
LEFT JOIN run_kinds k ON k.run_id = r.run_id
GROUP BY r.run_id, r.agent_version, k.kind;

-- As in 0007, with the run's kind as the last column.
CREATE OR REPLACE VIEW win_rate_history AS
SELECT
    v.run_id,
    min(v.created_at) AS run_at,
    any_value(v.strategy) AS strategy,
    any_value(v.baseline) AS baseline,
    any_value(v.candidate) AS candidate,
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
        count(*) FILTER (WHERE outcome IN ('candidate', 'baseline'))) AS ci_high,
    k.kind
FROM verdicts v
LEFT JOIN run_kinds k ON k.run_id = v.run_id
GROUP BY v.run_id, k.kind;

-- As in 0006, with the run's kind as the last column; `change` and `shifted`
-- compare with the previous run of the same kind (a PR run is never a night's
-- "previous run").
CREATE OR REPLACE VIEW judge_bias_history AS
WITH latest AS (
    SELECT * EXCLUDE (rn) FROM (
        SELECT *, row_number() OVER (
            PARTITION BY run_id, judge, probe, metric, strategy ORDER BY created_at DESC
        ) AS rn
        FROM bias_probes
    ) WHERE rn = 1
),
kinded AS (
    SELECT latest.*, k.kind FROM latest LEFT JOIN run_kinds k ON k.run_id = latest.run_id
)
SELECT
    judge,
    probe,
    metric,
    strategy,
    run_id,
    created_at AS measured_at,
    value,
    ci_low,
    ci_high,
    n,
    seed,
    value - lag(value) OVER w AS change,
    coalesce(
        ci_low > lag(ci_high) OVER w OR ci_high < lag(ci_low) OVER w, false
    ) AS shifted,
    kind
FROM kinded
WINDOW w AS (PARTITION BY kind, judge, probe, metric, strategy ORDER BY created_at)
ORDER BY judge, probe, metric, strategy, created_at;

-- Per night and run kind, as `flake_nightly` (0004): the keys the night's runs of
-- that kind executed, each in its state at the end of the night.
CREATE VIEW flake_nightly_by_kind AS
WITH night_keys AS (
    SELECT
        h.night,
        k.kind,
        arg_max(h.state, h.runs) AS state,
        CAST(sum(h.new_runs) AS BIGINT) AS executions,
        CAST(sum(h.new_flips) AS BIGINT) AS flips
    FROM flake_history h
    LEFT JOIN run_kinds k ON k.run_id = h.run_id
    GROUP BY h.night, k.kind, h.case_hash, h.agent_version, h.test_hash, h.tree, h.image_id
)
SELECT
    night,
    kind,
    count(*) AS keys,
    CAST(sum(executions) AS BIGINT) AS executions,
    count(*) FILTER (WHERE state = 'passing') AS passing,
    count(*) FILTER (WHERE state = 'failing') AS failing,
    count(*) FILTER (WHERE state = 'suspected') AS suspected,
    count(*) FILTER (WHERE state = 'flaky') AS flaky,
    count(*) FILTER (WHERE state = 'cleared') AS cleared,
    count(*) FILTER (WHERE flips > 0) AS flipped,
    count(*) FILTER (WHERE state = 'flaky') / count(*) AS flake_rate,
    wilson_low(count(*) FILTER (WHERE state = 'flaky'), count(*)) AS ci_low,
    wilson_high(count(*) FILTER (WHERE state = 'flaky'), count(*)) AS ci_high
FROM night_keys
GROUP BY night, kind;
