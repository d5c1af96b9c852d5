-- 0009: the corpus contract checked per case content (cache key: case_hash).
CREATE TABLE contract_checks (
    case_hash VARCHAR NOT NULL,
    case_id VARCHAR NOT NULL,
    corpus VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    reason VARCHAR,
    symptom VARCHAR,
    failing_tests JSON NOT NULL,
    run_id VARCHAR,
    checked_at TIMESTAMP NOT NULL
);
