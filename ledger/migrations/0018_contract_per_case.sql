-- 0018: the corpus contract per case (docs/sandbox.md#the-corpus-contract). A check now names the target's
-- known failures (tests that fail on the clean tree; they take no part in any case's decision),
-- the rewrite level the case's trees keep their outcomes at, and the contract's version. Older
-- checks were made under the whole-suite contract: version 0, never reused as a cache entry.
ALTER TABLE contract_checks ADD COLUMN known_failures JSON;
ALTER TABLE contract_checks ADD COLUMN rewrite_level VARCHAR;
ALTER TABLE contract_checks ADD COLUMN contract BIGINT;
UPDATE contract_checks SET known_failures = '[]', contract = 0;
