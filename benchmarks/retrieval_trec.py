"""Another name for ``python -m benchmarks.retrieval`` (kept for scripts that use it)."""

from benchmarks.retrieval import main

if __name__ == "__main__":
    raise SystemExit(main())
