"""Benchmarks: ratios measured inside one run (these machines are noisy)."""
