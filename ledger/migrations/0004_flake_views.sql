-- 0004: the flake ledger's fold columns and the views users query (DESIGN §5).
-- docs/ledger.md ("Flakes") documents every column and view, with example queries.

-- What the fold needs to carry from one run to the next (tasks/flakes):
-- executions that decided nothing, the outcome flips are counted against, and
-- the two times the "D days without a disagreement" rule compares.
ALTER TABLE flake_ledger ADD COLUMN undecided BIGINT DEFAULT 0;
ALTER TABLE flake_ledger ADD COLUMN last_decided VARCHAR;
ALTER TABLE flake_ledger ADD COLUMN last_decided_at TIMESTAMP;
ALTER TABLE flake_ledger ADD COLUMN last_flip_at TIMESTAMP;

-- Wilson 95% score interval for x successes out of n (null when n = 0), the
-- same figures as bughunt.stats.wilson, for proportions computed in SQL.
CREATE OR REPLACE MACRO wilson_low(x, n) AS
    CASE WHEN n > 0 THEN greatest(0.0,
        (2 * x + 3.841458820694124
         - 1.959963984540054 * sqrt(3.841458820694124 + 4 * x * (n - x) / n))
        / (2 * (n + 3.841458820694124)))
    END;
CREATE OR REPLACE MACRO wilson_high(x, n) AS
    CASE WHEN n > 0 THEN least(1.0,
        (2 * x + 3.841458820694124
         + 1.959963984540054 * sqrt(3.841458820694124 + 4 * x * (n - x) / n))
        / (2 * (n + 3.841458820694124)))
    END;

-- The current state of every test key: its latest row. `runs` only grows
-- from one fold of a key to the next, so it orders a key's rows even when
-- clocks disagree.
CREATE VIEW flake_current AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (
        PARTITION BY case_hash, agent_version, test_hash, tree, image_id
        ORDER BY runs DESC, updated_at DESC
    ) AS rn
    FROM flake_ledger
) WHERE rn = 1;

-- A case's bug category, by content hash: the latest classified manifest row.
-- Same content, same patch, same category.
CREATE VIEW case_categories AS
SELECT case_hash, arg_max(category, recorded_at) AS category
FROM corpus_manifest
WHERE category IS NOT NULL
GROUP BY case_hash;

-- Every flake_ledger row with its night (UTC date of the earliest latest-
-- execution among the run's keys, so a run that crosses midnight stays on one
-- night), its case's category, and what this run added to the key's counts.
CREATE VIEW flake_history AS
WITH nights AS (
    SELECT run_id, CAST(min(last_seen) AS DATE) AS night FROM flake_ledger GROUP BY run_id
)
SELECT
    f.*,
    nights.night,
    coalesce(c.category, 'unknown') AS category,
    f.runs - coalesce(lag(f.runs) OVER key_rows, 0) AS new_runs,
    f.passes - coalesce(lag(f.passes) OVER key_rows, 0) AS new_passes,
    f.fails - coalesce(lag(f.fails) OVER key_rows, 0) AS new_fails,
    f.flips - coalesce(lag(f.flips) OVER key_rows, 0) AS new_flips
FROM flake_ledger f
JOIN nights USING (run_id)
LEFT JOIN case_categories c USING (case_hash)
WINDOW key_rows AS (
    PARTITION BY f.case_hash, f.agent_version, f.test_hash, f.tree, f.image_id
    ORDER BY f.runs, f.updated_at
);

-- One row per key per night it was executed: its state at the end of the
-- night and what the night's executions were.
CREATE VIEW flake_night_keys AS
SELECT
    night, case_hash, agent_version, test_hash, tree, image_id, category,
    arg_max(case_id, runs) AS case_id,
    arg_max(state, runs) AS state,
    CAST(sum(new_runs) AS BIGINT) AS executions,
    CAST(sum(new_passes) AS BIGINT) AS passes,
    CAST(sum(new_fails) AS BIGINT) AS fails,
    CAST(sum(new_flips) AS BIGINT) AS flips
FROM flake_history
GROUP BY night, case_hash, agent_version, test_hash, tree, image_id, category;

-- Trends: per night, and per night and category / agent. flake_rate is the
-- share of the night's executed keys whose state is flaky, with its Wilson
-- interval; `flipped` counts keys that changed outcome during the night.
CREATE VIEW flake_nightly AS
SELECT
    night,
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
FROM flake_night_keys
GROUP BY night;

CREATE VIEW flake_nightly_by_category AS
SELECT
    night,
    category,
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
FROM flake_night_keys
GROUP BY night, category;

CREATE VIEW flake_nightly_by_agent AS
SELECT
    night,
    agent_version,
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
FROM flake_night_keys
GROUP BY night, agent_version;
