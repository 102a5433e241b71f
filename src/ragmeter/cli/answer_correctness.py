"""``ragmeter answer-correctness``: graphrag-eval's claim counts per TSV row.

The TSV is read and checked whole before any row is judged.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ragmeter.cli.judge_run import _err

# -- ragmeter answer-correctness (docs/steps.md) -------------------------------------------

AC_COLUMNS = ("Question", "Reference answer", "Actual answer")
AC_HEADER = ["#Reference", "#PTarget", "#Matching", "Reasoning", "Error"]


def _read_tsv(path: Path) -> list[tuple[int, list[str]]]:
    import csv

    from ragmeter.errors import InputError
    from ragmeter.io.files import open_text

    csv.field_size_limit(sys.maxsize)  # upstream fixed its field-size limit too (#91)
    name = str(path)
    rows: list[tuple[int, list[str]]] = []
    with open_text(name) as fh:
        reader = csv.reader(fh, delimiter="\t")
        try:
            header = next(reader, None)
            if header is None:
                raise InputError(
                    f"empty file (expected a header with {', '.join(AC_COLUMNS)})",
                    path=name,
                    line=1,
                )
            for col in AC_COLUMNS:
                if col not in header:
                    raise InputError(
                        f'missing column "{col}" (expected columns {", ".join(AC_COLUMNS)})',
                        path=name,
                        line=1,
                    )
            idx = [header.index(c) for c in AC_COLUMNS]
            need = max(idx) + 1
            start = reader.line_num + 1
            for row in reader:
                if not row:
                    start = reader.line_num + 1
                    continue
                if len(row) < need:
                    raise InputError(
                        f"{len(row)} fields (expected at least {need}: {', '.join(AC_COLUMNS)})",
                        path=name,
                        line=start,
                    )
                rows.append((start, [row[i] for i in idx]))
                start = reader.line_num + 1
        except csv.Error as exc:
            raise InputError(f"not valid TSV ({exc})", path=name, line=reader.line_num) from None
    if not rows:
        # a header alone is not an evaluation: writing a header-only TSV and exiting 0 would
        # read as "every row scored" to a script
        raise InputError(
            f"no samples (expected at least one row of {', '.join(AC_COLUMNS)} after the header)",
            path=name,
            line=2,
        )
    return rows


def _run_answer_correctness(
    in_file: Path, out_file: Path, config_path: Path | None, compat: str | None
) -> None:
    import asyncio
    import csv

    from ragmeter.errors import UsageError
    from ragmeter.io.files import atomic_write
    from ragmeter.judge.adapters import (
        BLANK_MESSAGE,
        correctness_prompt,
        steps_judge,
        validate_claims,
    )
    from ragmeter.judge.client import FatalJudgeError
    from ragmeter.judge.config import HINT, load_config_file, resolve_config

    if compat not in (None, "graphrag-eval-5", "graphrag-eval-6"):
        raise UsageError(
            f"--compat {compat!r} (expected graphrag-eval-5 or graphrag-eval-6)",
            command="answer-correctness",
        )
    prompt = None
    if config_path is not None:
        loaded = load_config_file(config_path)
        for w in loaded.warnings:
            _err(f"warning: {w}")
        data = loaded.graphrag or {}
        ac = data.get("answer_correctness")
        if isinstance(ac, dict) and ac.get("enabled") is False:
            raise UsageError(
                "answer correctness is disabled in the config (answer_correctness.enabled: false)",
                command="answer-correctness",
            )
        prompt = correctness_prompt(data)
        cfg = resolve_config(settings=loaded.settings)
    else:
        cfg = resolve_config()
    if not cfg.configured:
        raise UsageError(
            "no LLM is configured (give -c CONFIG with llm.generation, or "
            + HINT.split(": ", 1)[1].rstrip(".")
            + ")",
            command="answer-correctness",
        )
    rows = _read_tsv(in_file)
    v5 = compat == "graphrag-eval-5"

    async def main() -> list[list[str]]:
        judge = steps_judge(cfg, correctness_prompt=prompt)
        gate = asyncio.Semaphore(2 * cfg.concurrency)

        async def one(q: str, r: str, a: str) -> list[str]:
            if any(not s.strip() for s in (q, r, a)):
                return ["", "", "", "", BLANK_MESSAGE]
            async with gate:
                claims = await judge.answer_correctness(q, r, a)
            if "error" in claims:
                return ["", "", "", "", claims["error"]]
            problem = validate_claims(claims)
            if problem is not None:
                return ["", "", "", claims.get("reason", "") if v5 else "", problem]
            return [
                str(claims["reference"]),
                str(claims["actual"]),
                str(claims["matching"]),
                claims["reason"],
                "",
            ]

        try:
            return await asyncio.gather(*(one(*vals) for _, vals in rows))
        finally:
            await judge.aclose()

    try:
        out_rows = asyncio.run(main())
    except FatalJudgeError as exc:  # 401/403/404, exhausted quota: stop, nothing written
        raise UsageError(str(exc), command="answer-correctness") from None
    with atomic_write(out_file) as fh:
        writer = csv.writer(fh, delimiter="\t")
        writer.writerow(AC_HEADER)
        writer.writerows(out_rows)
