-- 0003: the manifest names its corpus, so "previous manifest" is per corpus.
ALTER TABLE corpus_manifest ADD COLUMN corpus VARCHAR;
ALTER TABLE corpus_manifest ADD COLUMN target_hash VARCHAR;
