-- 0012: the reproduction test's hash joins a record's identity
-- (docs/outcome-contract.md#identity-and-records-that-share-one): a test run again with other source
-- is a new observation, never a replay of the old one. Follows
-- tasks/score/outcomes.py exactly (KEY_FIELDS); `conflicts` and `unscored`
-- read this view and are unchanged.
CREATE OR REPLACE VIEW observation_identities AS
SELECT
    *,
    CASE
        WHEN record_id IS NOT NULL THEN 'record_id=' || CAST(to_json(record_id) AS VARCHAR)
        ELSE 'key=' || CAST(json_object(
            'agent_version', agent_version, 'case_id', case_id,
            'kind', kind, 'run_id', run_id, 'test_hash', test_hash) AS VARCHAR)
    END AS identity,
    coalesce(case_id, record_id) AS case_key,
    CAST(to_json([status, case_hash, agent_version, kind, case_id, run_id, test_hash]) AS VARCHAR) AS outcome_key,
    coalesce(source, '?') || coalesce(':' || CAST(source_line AS VARCHAR), '') AS source_ref
FROM observations;
