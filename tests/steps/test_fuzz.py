"""Fuzzed inputs (docs/steps.md): 10,000 random mutations of the fixture files end in a result
or a one-line ``InputError``, never a traceback."""

from __future__ import annotations

import asyncio
import copy
import json
import random
import warnings
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.graphrag import load_reference, load_responses
from ragmeter.steps import compute_aggregates, run_evaluation, to_result
from ragmeter.steps.pipeline import evaluate
from tests.steps.common import DOCS, LLM, MAIN, load_yaml, read_responses

BASES = [
    (MAIN / "reference_2.yaml", MAIN / "actual_responses_3.jsonl"),
    (MAIN / "reference_4.yaml", MAIN / "actual_responses_3.jsonl"),
    (MAIN / "reference_5.yaml", MAIN / "actual_responses_4.jsonl"),
    (LLM / "reference_1.yaml", LLM / "actual_responses_1.jsonl"),
    (LLM / "reference_1.yaml", LLM / "actual_responses_2.jsonl"),
    (DOCS / "reference.yaml", DOCS / "target.json"),
]
ODD_VALUES: list[Any] = [
    None,
    0,
    -1,
    1.5,
    True,
    "",
    "x",
    "ü\u0000😀 \u202e",
    [],
    {},
    [[]],
    [{}],
    {"type": "uri"},
    "y" * 100_000,
    '{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": 5}]}}',
    '[{"id": 1}]',
    "now",
    "5m-ago",
    "2025-13-45T99:00:00Z",
]


def _load(base):
    reference_path, responses_path = base
    reference = load_yaml(reference_path)
    if responses_path.suffix == ".json":
        responses = json.loads(responses_path.read_text(encoding="utf-8"))
    else:
        responses = read_responses(responses_path)
    # keep the responses the reference asks for, and one stray (copying is the main cost)
    wanted = {str(q["id"]) for t in reference for q in t["questions"]}
    kept = {k: v for k, v in responses.items() if str(k) in wanted}
    stray = next((k for k in responses if str(k) not in wanted), None)
    if stray is not None:
        kept[stray] = responses[stray]
    return reference, kept


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(rng: random.Random, root: Any) -> Any:
    paths = [p for p in _paths(root) if p]
    if not paths:
        return rng.choice(ODD_VALUES)
    path = rng.choice(paths)
    parent = root
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    current = parent[key]
    roll = rng.random()
    if roll < 0.25:
        del parent[key]
    elif roll < 0.5 and isinstance(current, str) and current:
        parent[key] = current[: rng.randrange(len(current))]  # truncated JSON or text
    elif roll < 0.6 and isinstance(current, list):
        if current and rng.random() < 0.5:
            current.append(copy.deepcopy(rng.choice(current)))
        else:
            current.clear()
    else:
        parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))
    return root


def _run_one(rng: random.Random, reference: Any, responses: Any) -> None:
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.5:
            reference = _mutate(rng, reference)
        else:
            responses = _mutate(rng, responses)
    compat = rng.choice([None, "graphrag-eval-6", "graphrag-eval-5"])
    on_missing = rng.choice(["error", "error-sample"])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = run_evaluation(
                reference,
                responses,
                compat=compat,
                on_missing=on_missing,
                strict=rng.random() < 0.1,
            )
    except InputError as exc:
        message = str(exc)
        assert message and "\n" not in message, message
        return
    aggregates = compute_aggregates(results, compat=compat)
    to_result(results, aggregates, compat=compat)
    json.dumps(aggregates)


def test_ten_thousand_mutations():
    rng = random.Random(4242)
    loaded = [_load(base) for base in BASES]
    failures = []
    for n in range(10_000):
        reference, responses = copy.deepcopy(rng.choice(loaded))
        try:
            _run_one(rng, reference, responses)
        except Exception as exc:  # report every escaped exception with its case number
            failures.append(f"case {n}: {type(exc).__name__}: {exc!s:.200}")
    assert not failures, "\n".join(failures[:20])


def test_mutated_files(tmp_path):
    """Byte-level damage to the files themselves, through the file loaders."""
    rng = random.Random(7)
    for n in range(300):
        reference_path, responses_path = rng.choice(BASES)
        ref_text = reference_path.read_text(encoding="utf-8")
        resp_text = responses_path.read_text(encoding="utf-8")
        target = rng.choice(["reference", "responses"])
        text = ref_text if target == "reference" else resp_text
        cut = rng.randrange(len(text))
        roll = rng.random()
        if roll < 0.4:
            text = text[:cut]
        elif roll < 0.7:
            text = (
                text[:cut]
                + rng.choice(["\x00", "{", "]", "\t", ":", "- ", "\n\n", "💥"])
                + text[cut:]
            )
        else:
            text = text[:cut] + text[cut + rng.randint(1, 50) :]
        ref_file = tmp_path / f"r{n}{reference_path.suffix}"
        resp_file = tmp_path / f"s{n}{responses_path.suffix}"
        ref_file.write_text(text if target == "reference" else ref_text, encoding="utf-8")
        resp_file.write_text(text if target == "responses" else resp_text, encoding="utf-8")
        try:
            located = load_reference(ref_file)
            entries, name = load_responses(resp_file)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                asyncio.run(evaluate(located, entries, name, on_missing="error-sample"))
        except InputError as exc:
            assert "\n" not in str(exc), str(exc)
