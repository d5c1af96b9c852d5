-- 0017: a contract check keeps the seconds its suite executions took (the case's own buggy
-- runs plus its share of the target's clean runs), so a run's sandbox time can be told apart
-- into contract checks and reproduction tests. Older checks have none (NULL).
ALTER TABLE contract_checks ADD COLUMN duration_s DOUBLE;
