"""Benchmarks: ratios measured side by side in one run (absolute times on shared machines are noisy)."""
