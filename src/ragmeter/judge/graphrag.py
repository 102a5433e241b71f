"""graphrag-eval files for ``ragmeter judge --format graphrag`` (judge.md §10.7, §10.8, §12)."""

from __future__ import annotations
