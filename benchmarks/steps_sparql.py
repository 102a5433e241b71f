"""Alias of :mod:`benchmarks.steps` under the name steps.md §7.5 uses."""

import sys

from benchmarks.steps import main

if __name__ == "__main__":
    sys.exit(main())
