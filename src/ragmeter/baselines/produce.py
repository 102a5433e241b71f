"""What ``ragmeter baseline`` writes: outputs, their sidecars and the ``systems:`` block.

Every output is written atomically, and next to it ``<output>.meta.json`` records the options,
library versions, input hashes and counts, warnings and timings. The sidecar holds timings, so
only the output file itself is byte-identical across runs.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any

from ragmeter._version import __version__
from ragmeter.io.files import PathLike, atomic_write, sha256_file

__all__ = ["Sidecar", "libraries", "write_jsonl", "write_sidecar"]

LIBRARIES = ("bm25s", "PyStemmer", "rapidfuzz", "sentence-transformers", "torch", "numpy")


def libraries() -> dict[str, str | None]:
    """Installed versions of the libraries a baseline may depend on."""
    out: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


class Sidecar:
    """Collects what a baseline's ``.meta.json`` records."""

    def __init__(self, baseline: str, options: Mapping[str, Any]) -> None:
        self.data: dict[str, Any] = {
            "ragmeter": __version__,
            "baseline": baseline,
            "options": dict(options),
            "libraries": libraries(),
            "inputs": [],
            "queries_without_results": [],
            "truncated_documents": None,
            "warnings": [],
            "seconds": {},
        }
        self._t0 = time.perf_counter()

    def input(self, path: PathLike, count: int, what: str) -> None:
        self.data["inputs"].append(
            {"role": what, "path": os.fspath(path), "sha256": sha256_file(path), "count": count}
        )

    def warn(self, message: str, command: str) -> None:
        """Record a warning and print it (one line on stderr)."""
        if message not in self.data["warnings"]:
            self.data["warnings"].append(message)
            print(f"{command}: warning: {message}", file=sys.stderr)

    def lap(self, step: str) -> None:
        now = time.perf_counter()
        self.data["seconds"][step] = round(now - self._t0, 3)
        self._t0 = now


def write_sidecar(output: PathLike, sidecar: Sidecar) -> str:
    """Write ``<output>.meta.json``; return its path."""
    path = f"{os.fspath(output)}.meta.json"
    with atomic_write(path) as fh:
        fh.write(json.dumps(sidecar.data, indent=1, ensure_ascii=False) + "\n")
    return path


def write_jsonl(path: PathLike, records: Sequence[Mapping[str, Any]]) -> None:
    """JSONL, one record per line, atomically (keys in the order given)."""
    with atomic_write(path) as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def entities_records(
    sample_ids: Sequence[str],
    types: Mapping[str, Mapping[str, Any]],
    links: Mapping[str, list[Mapping[str, Any]]],
) -> list[dict[str, Any]]:
    """Per gold sample, the runner's ``entities`` form: types and links merged."""
    out = []
    for sid in sample_ids:
        rec: dict[str, Any] = {"id": sid}
        t = types.get(sid)
        if t is not None and t.get("label") is not None:
            rec["type_classification"] = {
                "primary_type": t["label"],
                "secondary_types": list(t.get("secondary_labels", [])),
            }
        if sid in links:
            rec["entity_linking"] = [
                {
                    "mention_id": r["mention_id"],
                    "candidates": [
                        {"kb_id": c["kb_id"], "score": c["score"]} for c in r["candidates"]
                    ],
                    "nil": r["nil"],
                }
                for r in links[sid]
            ]
        out.append(rec)
    return out


def systems_block(entries: Sequence[Mapping[str, Any]]) -> str:
    """The ``systems:`` block for ragmeter.yaml (YAML, flow-style outputs)."""
    lines = ["systems:"]
    for e in entries:
        lines.append(f"  - name: {e['name']}")
        lines.append(f'    version: "{e["version"]}"')
        outs = ", ".join(f"{k}: {v}" for k, v in e["outputs"].items())
        lines.append(f"    outputs: {{{outs}}}")
        if e.get("empty"):
            # queries without results score 0 instead of being left out (trec_eval -c), whatever
            # tasks.retrieval.complete says
            lines.append("    complete: true")
    return "\n".join(lines) + "\n"
