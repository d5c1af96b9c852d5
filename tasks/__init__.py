"""The six stages of the pipeline, one package each (docs/architecture.md#the-stages)."""
