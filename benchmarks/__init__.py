"""Side-by-side speed benchmarks (python -m benchmarks.NAME)."""
