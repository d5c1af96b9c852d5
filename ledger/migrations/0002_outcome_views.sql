-- 0002: views of the outcome contract (DESIGN §3) over all history.
-- `identity` and `case_key` follow tasks/score/outcomes.py exactly (a test
-- checks that these views and the Python summary agree).
CREATE VIEW observation_identities AS
SELECT
    *,
    CASE
        WHEN record_id IS NOT NULL THEN 'record_id=' || CAST(to_json(record_id) AS VARCHAR)
        ELSE 'key=' || CAST(json_object(
            'agent_version', agent_version, 'case_id', case_id,
            'kind', kind, 'run_id', run_id) AS VARCHAR)
    END AS identity,
    coalesce(case_id, record_id) AS case_key,
    CAST(to_json([status, case_hash, agent_version, kind, case_id, run_id]) AS VARCHAR) AS outcome_key,
    coalesce(source, '?') || coalesce(':' || CAST(source_line AS VARCHAR), '') AS source_ref
FROM observations;

CREATE VIEW conflicts AS
WITH ids AS (SELECT * FROM observation_identities),
firsts AS (
    SELECT identity, arg_min(outcome_key, ingested_at) AS first_outcome
    FROM ids GROUP BY identity
)
SELECT
    ids.identity,
    list(DISTINCT ids.case_key ORDER BY ids.case_key) AS case_ids,
    count(*) AS records,
    count(DISTINCT ids.outcome_key) AS outcome_variants,
    list(DISTINCT ids.status ORDER BY ids.status) AS statuses,
    list(DISTINCT ids.source_ref ORDER BY ids.source_ref) AS sources,
    min(ids.ingested_at) AS first_seen,
    min(ids.ingested_at) FILTER (WHERE ids.outcome_key <> firsts.first_outcome) AS disputed_since,
    max(ids.ingested_at) AS last_seen
FROM ids JOIN firsts USING (identity)
GROUP BY ids.identity
HAVING count(DISTINCT ids.outcome_key) > 1;

CREATE VIEW unscored AS
WITH ids AS (SELECT * FROM observation_identities),
disputed_ids AS (
    SELECT identity FROM ids GROUP BY identity HAVING count(DISTINCT outcome_key) > 1
),
per_status AS (
    SELECT case_key, status, count(DISTINCT identity) AS n FROM ids GROUP BY ALL
),
reasons AS (
    SELECT case_key,
        'no decided observation (pass or fail): '
            || string_agg(CAST(n AS VARCHAR) || ' ' || status, ', ' ORDER BY status) AS reason
    FROM per_status GROUP BY case_key
),
per_case AS (
    SELECT
        case_key,
        bool_or(identity IN (SELECT identity FROM disputed_ids)) AS has_disputed,
        bool_or(status IN ('pass', 'fail')) AS has_decided,
        count(DISTINCT identity) AS observations,
        list(DISTINCT source_ref ORDER BY source_ref) AS sources,
        min(ingested_at) AS first_seen,
        max(ingested_at) AS last_seen
    FROM ids GROUP BY case_key
)
SELECT per_case.case_key AS case_id, reasons.reason, per_case.observations,
       per_case.sources, per_case.first_seen AS unscored_since, per_case.last_seen
FROM per_case JOIN reasons USING (case_key)
WHERE NOT per_case.has_disputed AND NOT per_case.has_decided;
