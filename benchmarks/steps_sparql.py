"""Alias of :mod:`benchmarks.steps` under a second name."""

import sys

from benchmarks.steps import main

if __name__ == "__main__":
    sys.exit(main())
