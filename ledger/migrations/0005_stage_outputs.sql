-- 0005: finished stages of a run, for resuming a re-run of the same run id.
CREATE TABLE stage_outputs (
    run_id VARCHAR NOT NULL,
    stage VARCHAR NOT NULL,
    inputs_hash VARCHAR NOT NULL,
    payload JSON NOT NULL,
    rows_written JSON NOT NULL,
    duration_s DOUBLE,
    recorded_at TIMESTAMP NOT NULL
);
