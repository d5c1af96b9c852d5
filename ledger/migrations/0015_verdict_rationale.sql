-- 0015: a verdict keeps the judge's rationale for the calls it rests on (capped, untrusted),
-- so "why did this pair go that way" is answered from the verdict itself. Older verdicts have
-- none (NULL); their calls' rationales are still in judge_calls.
ALTER TABLE verdicts ADD COLUMN rationale VARCHAR;
