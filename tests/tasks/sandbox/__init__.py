"""Tests of the sandbox against the real Docker engine (and its pure helpers)."""
