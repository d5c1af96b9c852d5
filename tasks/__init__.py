"""The six stages of the pipeline, one package each (DESIGN §2)."""
