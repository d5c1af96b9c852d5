-- 0016: a judge call's cache key names what answered it: the judge's model, its endpoint and the
-- prompt template's version, beside the judge's name (docs/judges.md#cache). A judge whose model
-- changes under the same name no longer reuses the old model's answers.
--
-- Older calls know only the judge's name. Nothing here can tell which model answered them: the
-- judges' configuration is not in the ledger, and a [judges.NAME] table can even redefine the
-- built-in `sim` (its parameters, its seed). So their model and endpoint stay NULL, meaning
-- "recorded before the key had them", and the cache does not reuse them until someone vouches
-- for them with `bughunt cache adopt --judge NAME` (a judge_cache_adoptions row, below). Their
-- template version is knowable: 1, the first. A call made with an older template's text has a
-- prompt hash that no version-1 prompt has, so it can answer nothing it should not.
ALTER TABLE judge_calls ADD COLUMN model VARCHAR;
ALTER TABLE judge_calls ADD COLUMN endpoint VARCHAR;
ALTER TABLE judge_calls ADD COLUMN template_version BIGINT;
UPDATE judge_calls SET template_version = 1;

-- Clearing or pruning the cache keeps every call (calls are history) and records instead which
-- answers are no longer reused: those recorded before `recorded_before`, of one judge, one model
-- or all (`bughunt cache clear|prune`).
CREATE TABLE judge_cache_invalidations (
    kind VARCHAR NOT NULL,
    judge VARCHAR,
    model VARCHAR,
    recorded_before TIMESTAMP NOT NULL,
    recorded_at TIMESTAMP NOT NULL
);

-- Someone's word that a judge's calls from before this migration were made by this model at this
-- endpoint. Only calls recorded before the adoption are adopted; a judge's first adoption holds.
CREATE TABLE judge_cache_adoptions (
    judge VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    endpoint VARCHAR NOT NULL,
    recorded_at TIMESTAMP NOT NULL
);

-- Every answer the cache holds, in the columns of judge_calls: calls that ended judged, by the
-- judge itself (a cached call repeats an older answer), not cleared or pruned since. An adopted
-- call carries the adopted model and endpoint; a call from before this migration that nobody
-- adopted has them NULL and is never reused. How old an answer may be is the run's choice
-- (`--judge-cache-ttl`), not the view's.
CREATE VIEW judge_cache AS
WITH adopted AS (
    SELECT
        judge,
        arg_min(model, recorded_at) AS model,
        arg_min(endpoint, recorded_at) AS endpoint,
        min(recorded_at) AS adopted_at
    FROM judge_cache_adoptions
    GROUP BY judge
), keyed AS (
    SELECT c.* REPLACE (
        coalesce(c.model, a.model) AS model,
        coalesce(c.endpoint, a.endpoint) AS endpoint
    )
    FROM judge_calls c
    LEFT JOIN adopted a
        ON c.model IS NULL AND a.judge = c.judge AND c.created_at < a.adopted_at
)
SELECT * FROM keyed k
WHERE k.status = 'judged' AND k.winner IS NOT NULL AND NOT k.cached
    AND NOT EXISTS (
        SELECT 1 FROM judge_cache_invalidations i
        WHERE (i.judge IS NULL OR i.judge = k.judge)
            AND (i.model IS NULL OR i.model = k.model)
            AND k.created_at < i.recorded_before
    );
