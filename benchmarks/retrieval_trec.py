"""The spec's name for ``python -m benchmarks.retrieval`` (specs/retrieval.md §9.3)."""

from benchmarks.retrieval import main

if __name__ == "__main__":
    raise SystemExit(main())
