"""Side-by-side speed benchmarks against the reference implementations.

Run one as ``python -m benchmarks.NAME``; see benchmarks/README.md.
"""
