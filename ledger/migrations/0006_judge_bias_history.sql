-- 0006: judge bias history (DESIGN §6.3): latest value per run, change and shift against the previous run.
CREATE VIEW judge_bias_history AS
WITH latest AS (
    SELECT * EXCLUDE (rn) FROM (
        SELECT *, row_number() OVER (
            PARTITION BY run_id, judge, probe, metric, strategy ORDER BY created_at DESC
        ) AS rn
        FROM bias_probes
    ) WHERE rn = 1
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
    ) AS shifted
FROM latest
WINDOW w AS (PARTITION BY judge, probe, metric, strategy ORDER BY created_at)
ORDER BY judge, probe, metric, strategy, created_at;

