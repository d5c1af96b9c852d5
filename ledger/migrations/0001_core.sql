-- 0001: the append-only raw tables (DESIGN §9).
-- Timestamps are TIMESTAMP holding UTC: the ICU extension that TIMESTAMPTZ needs
-- cannot be downloaded on machines without internet access.
CREATE TABLE runs (
    run_id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    recorded_at TIMESTAMP NOT NULL,
    corpus VARCHAR,
    corpus_hash VARCHAR,
    baseline VARCHAR,
    candidate VARCHAR,
    judge VARCHAR,
    strategy VARCHAR,
    parameters JSON NOT NULL,
    message VARCHAR
);

CREATE TABLE corpus_manifest (
    run_id VARCHAR NOT NULL,
    corpus_hash VARCHAR NOT NULL,
    case_id VARCHAR NOT NULL,
    case_hash VARCHAR NOT NULL,
    category VARCHAR,
    recorded_at TIMESTAMP NOT NULL
);

CREATE TABLE observations (
    observation_id VARCHAR NOT NULL,
    record_id VARCHAR,
    case_id VARCHAR,
    run_id VARCHAR,
    agent_version VARCHAR,
    kind VARCHAR,
    status VARCHAR NOT NULL,
    case_hash VARCHAR,
    note VARCHAR,
    annotations JSON NOT NULL,
    source VARCHAR,
    source_line BIGINT,
    batch_id VARCHAR,
    ingested_at TIMESTAMP NOT NULL,
    tree VARCHAR,
    "repeat" BIGINT,
    exit_code BIGINT,
    duration_s DOUBLE,
    output VARCHAR,
    test_hash VARCHAR,
    image_id VARCHAR
);

CREATE TABLE judge_calls (
    call_id VARCHAR NOT NULL,
    run_id VARCHAR NOT NULL,
    case_id VARCHAR NOT NULL,
    judge VARCHAR NOT NULL,
    family VARCHAR NOT NULL,
    "order" VARCHAR NOT NULL,
    sample_index BIGINT NOT NULL,
    prompt_hash VARCHAR NOT NULL,
    attempts BIGINT NOT NULL,
    status VARCHAR NOT NULL,
    winner VARCHAR,
    rationale VARCHAR,
    failure_reason VARCHAR,
    latency_s DOUBLE,
    raw_answer VARCHAR,
    cached BOOLEAN NOT NULL,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE verdicts (
    run_id VARCHAR NOT NULL,
    case_id VARCHAR NOT NULL,
    baseline VARCHAR NOT NULL,
    candidate VARCHAR NOT NULL,
    strategy VARCHAR NOT NULL,
    outcome VARCHAR NOT NULL,
    reason VARCHAR,
    calls BIGINT NOT NULL,
    category VARCHAR,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE bias_probes (
    run_id VARCHAR NOT NULL,
    judge VARCHAR NOT NULL,
    strategy VARCHAR NOT NULL,
    probe VARCHAR NOT NULL,
    metric VARCHAR NOT NULL,
    value DOUBLE,
    ci_low DOUBLE,
    ci_high DOUBLE,
    n BIGINT NOT NULL,
    seed BIGINT,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE flake_ledger (
    run_id VARCHAR NOT NULL,
    case_hash VARCHAR NOT NULL,
    agent_version VARCHAR NOT NULL,
    test_hash VARCHAR NOT NULL,
    tree VARCHAR NOT NULL,
    image_id VARCHAR NOT NULL,
    case_id VARCHAR,
    runs BIGINT NOT NULL,
    passes BIGINT NOT NULL,
    fails BIGINT NOT NULL,
    flips BIGINT NOT NULL,
    consecutive_consistent BIGINT NOT NULL,
    last_status VARCHAR,
    first_seen TIMESTAMP NOT NULL,
    last_seen TIMESTAMP NOT NULL,
    flake_rate DOUBLE,
    ci_low DOUBLE,
    ci_high DOUBLE,
    state VARCHAR NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

CREATE VIEW runs_latest AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY recorded_at DESC) AS rn
    FROM runs
) WHERE rn = 1;
