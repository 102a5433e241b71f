"""``ragmeter split``: group-aware multi-factor splits, k folds or a stratified sample of a gold
JSONL file (docs/stats.md, docs/runner.md). Writes the manifest and prints the balance table."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from ragmeter.errors import UsageError
from ragmeter.stats_choices import SPLIT_METHODS

COMMAND = "split"


def _factors(by: list[str]) -> list[str]:
    out: list[str] = []
    for chunk in by:
        for f in chunk.split(","):
            f = f.strip()
            if f and f not in out:
                out.append(f)
    return out


def parse_ratios(text: str | None) -> Any:
    """``0.70,0.15,0.15`` (train, dev, test), ``dev=0.3,test=0.7`` or the preset ``heritage``."""
    if text is None or text.strip() == "heritage":
        return "heritage"
    parts = [p.strip() for p in text.split(",") if p.strip()]
    try:
        if all("=" in p for p in parts):
            return {k.strip(): float(v) for k, v in (p.split("=", 1) for p in parts)}
        if any("=" in p for p in parts):
            raise ValueError
        return [float(p) for p in parts]
    except ValueError:
        raise UsageError(
            f"--ratios {text!r} (expected train,dev,test numbers such as 0.70,0.15,0.15, "
            "name=ratio pairs, or heritage)",
            command=COMMAND,
        ) from None


def parse_rare_policy(values: list[str]) -> str | dict[str, str]:
    """One policy for every factor, plus ``FACTOR=POLICY`` overrides."""
    default = "bucket"
    per: dict[str, str] = {}
    for v in values:
        if "=" in v:
            f, _, policy = v.partition("=")
            per[f.strip()] = policy.strip()
        else:
            default = v.strip()
    return {"*": default, **per} if per else default


def _hierarchy(values: list[str]) -> Any:
    if not values:
        return None
    out: dict[str, Any] = {}
    for v in values:
        if v == "heritage":
            out["custodian_type"] = "heritage"
            continue
        factor, eq, source = v.partition("=")
        if not eq:
            raise UsageError(
                f"--hierarchy {v!r} (expected heritage or FACTOR=heritage|FILE)", command=COMMAND
            )
        out[factor] = source if source == "heritage" else _read_hierarchy(source)
    return out


def _read_hierarchy(path: str) -> dict[str, str]:
    """A JSON or YAML file: ``{"parent": {value: parent}}`` (a hierarchy profile) or a flat
    mapping value → parent."""
    from ragmeter.errors import InputError
    from ragmeter.io.files import open_text

    with open_text(path) as fh:
        text = fh.read()
    from ragmeter.io import yamlsafe

    data = yamlsafe.load(text, path)
    if isinstance(data, dict) and isinstance(data.get("parent"), dict):
        data = data["parent"]
    if not isinstance(data, dict) or not all(
        isinstance(k, (str, int)) and isinstance(v, (str, int)) for k, v in data.items()
    ):
        raise InputError(
            'a hierarchy maps each value to its parent (expected {"parent": {value: parent}})',
            path=path,
        )
    return {str(k): str(v) for k, v in data.items()}


def _print_split(res: Any, *, to_stderr: bool) -> None:
    from rich.table import Table

    from ragmeter.cli.console import WIDE_PIPE_WIDTH, make_console

    console = make_console(to_stderr, pipe_width=WIDE_PIPE_WIDTH)
    rep = res.report
    splits = [s for s in rep["sizes"] if res.manifest["ratios"].get(s, 0) > 0]
    sizes = ", ".join(f"{s} {rep['sizes'][s]} (target {rep['targets'][s]:.1f})" for s in splits)
    console.print(
        f"{rep['n_items']} items in {rep['n_groups']} groups → {sizes}; "
        f"groups in more than one split: {rep['leakage']['groups_in_more_than_one_split']}",
        highlight=False,
    )
    table = Table("factor", "value", "n", "overall", *splits, title="balance (share per split)")
    for factor, info in rep["factors"].items():
        first = True
        for value, row in info["values"].items():
            cells = [factor if first else "", value, str(row["count"]), f"{row['overall']:.1%}"]
            for s in splits:
                share = row.get(s)
                cells.append("—" if share is None else f"{share:.1%}")
            table.add_row(*cells)
            first = False
        table.add_row(
            "",
            "max deviation",
            "",
            "",
            f"{info['max_abs_share_deviation_pp']:.2f} pp",
            *[""] * (len(splits) - 1),
            end_section=True,
        )
    console.print(table)
    notes = []
    rare = rep.get("rare") or {}
    for label, key in (("bucketed as __rare__", "bucketed"), ("merged", "merged")):
        if rare.get(key):
            notes.append(f"{label}: {rare[key]}")
    if rare.get("pinned"):
        notes.append(f"pinned: {rare['pinned']}")
    cov = rep.get("coverage") or {}
    for m in cov.get("moves", []):
        notes.append(
            f"coverage: moved group {m['group']} ({m['items']} items, {m['factor']}={m['value']}) "
            f"from {m['from']} to {m['to']}"
        )
    for f in cov.get("failures", []):
        notes.append(f"coverage: no group could bring {f['factor']}={f['value']} into {f['split']}")
    for factor, absent in rep["values_absent_from_split"].items():
        for s, values in absent.items():
            notes.append(f"absent from {s}: {factor} {', '.join(values)}")
    for n in notes:
        console.print(n, highlight=False)
    console.print(f"sha256 {res.manifest['sha256']}", highlight=False)


def _print_sample(res: Any, *, to_stderr: bool) -> None:
    from rich.table import Table

    from ragmeter.cli.console import WIDE_PIPE_WIDTH, make_console

    console = make_console(to_stderr, pipe_width=WIDE_PIPE_WIDTH)
    rep = res.report
    table = Table("stratum", "size", "quota", "sampled", title=f"stratified sample of {rep['n']}")
    for row in rep["strata"]:
        table.add_row(
            row["stratum"], str(row["size"]), f"{row['quota']:.3f}", str(row["allocated"])
        )
    console.print(table)
    console.print(f"sha256 {res.manifest['sha256']}", highlight=False)


def register(app: typer.Typer) -> None:
    @app.command("split")
    def split_cmd(
        gold: Annotated[
            str,
            typer.Argument(help="Gold JSONL (one sample per line: id, strata).", metavar="GOLD"),
        ],
        by: Annotated[
            list[str] | None,
            typer.Option("--by", help="Stratification factors, comma-separated or repeated."),
        ] = None,
        group: str | None = typer.Option(
            None, "--group", help="Group key (no group in two splits), e.g. institution_id."
        ),
        ratios: str | None = typer.Option(
            None,
            "--ratios",
            help="train,dev,test (e.g. 0.70,0.15,0.15), name=ratio pairs, "
            "or heritage (the default).",
        ),
        seed: int = typer.Option(0, "--seed", help="Seed (written into the manifest)."),
        rare_policy: Annotated[
            list[str] | None,
            typer.Option(
                "--rare-policy",
                help="bucket (default) | merge | pin:SPLIT | error; "
                "FACTOR=POLICY for one factor (repeat).",
            ),
        ] = None,
        min_count: int | None = typer.Option(
            None,
            "--min-count",
            help="Values with fewer items are rare (default: number of splits; 2 for --sample).",
        ),
        coverage: bool = typer.Option(
            True,
            "--coverage/--no-coverage",
            help="Move a group into a split that lacks a value carried by enough groups.",
        ),
        method: str = typer.Option(
            SPLIT_METHODS[0], "--method", help=f"{' | '.join(SPLIT_METHODS)}."
        ),
        primary_factor: str | None = typer.Option(
            None, "--primary-factor", help="sklearn_group: the one factor it balances."
        ),
        ignore_groups: bool = typer.Option(
            False, "--ignore-groups", help="iterstrat: accept groups split across splits."
        ),
        hierarchy: Annotated[
            list[str] | None,
            typer.Option(
                "--hierarchy",
                help="For --rare-policy merge: heritage, or FACTOR=heritage|FILE "
                "(JSON/YAML value → parent).",
            ),
        ] = None,
        kfold: int | None = typer.Option(
            None, "--kfold", help="K equal folds instead of train/dev/test."
        ),
        sample: int | None = typer.Option(
            None, "--sample", help="Draw a stratified sample of N items instead of splitting."
        ),
        allocation: str = typer.Option(
            "proportional", "--allocation", help="--sample: proportional | equal."
        ),
        min_per_stratum: int = typer.Option(
            0, "--min-per-stratum", help="--sample: at least this many per stratum."
        ),
        id_key: str = typer.Option("id", "--id-key", help="The sample id key."),
        output: str | None = typer.Option(
            None, "-o", "--output", help="Write the manifest here (else to stdout)."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print manifest and report as JSON."),
    ) -> None:
        """Split a gold set (or draw a stratified sample) and write the split manifest.

        ragmeter split gold.jsonl --by custodian_type,country --group institution_id
        --ratios 0.70,0.15,0.15 --seed 42 -o split-manifest.json
        """
        from ragmeter.io.jsonutil import dumps
        from ragmeter.io.split_items import read_split_items
        from ragmeter.io.split_manifest import write_manifest
        from ragmeter.stats import datasets

        factors = _factors(by or [])
        if kfold is not None and sample is not None:
            raise UsageError(
                "--kfold and --sample are different operations; pick one", command=COMMAND
            )
        if kfold is not None and ratios is not None:
            raise UsageError(
                "--kfold sets its own ratios (k equal folds); drop --ratios", command=COMMAND
            )
        if sample is not None and not factors:
            raise UsageError("--sample needs the strata: give --by", command=COMMAND)
        policy = parse_rare_policy(rare_policy or [])
        if isinstance(policy, dict):
            default = policy.pop("*")
            unknown = [f for f in policy if f not in factors]
            if unknown:
                raise UsageError(
                    f"--rare-policy names factor {unknown[0]!r}, which is not in --by",
                    command=COMMAND,
                )
            policy = {f: policy.get(f, default) for f in factors}
        hier = _hierarchy(hierarchy or [])
        items = read_split_items(gold, factors=factors, group_key=group, id_key=id_key)
        try:
            if sample is not None:
                if isinstance(policy, dict):
                    raise UsageError(
                        "--sample takes one --rare-policy for every factor", command=COMMAND
                    )
                res: Any = datasets.stratified_sample(
                    items,
                    by=factors,
                    n=sample,
                    allocation=allocation,
                    min_per_stratum=min_per_stratum,
                    rare_policy=None if not rare_policy else policy,
                    min_count=min_count,
                    hierarchy=hier,
                    seed=seed,
                )
            else:
                options: dict[str, Any] = {
                    "factors": factors,
                    "group_key": group,
                    "seed": seed,
                    "rare_policy": policy,
                    "min_count": min_count,
                    "coverage": coverage,
                    "method": method,
                    "hierarchy": hier,
                    "primary_factor": primary_factor,
                    "ignore_groups": ignore_groups,
                }
                if kfold is not None:
                    res = datasets.kfold(items, kfold, **options)
                else:
                    res = datasets.split(items, ratios=parse_ratios(ratios), **options)
        except UsageError as exc:
            if exc.command is None:
                raise UsageError(exc.message, command=COMMAND) from None
            raise
        if output is not None:
            write_manifest(output, res.manifest)
        if as_json:
            sys.stdout.write(dumps(res.to_dict(), indent=2) + "\n")
            return
        to_stderr = output is None
        if to_stderr:
            sys.stdout.write(dumps(res.manifest, indent=2) + "\n")
        if sample is not None:
            _print_sample(res, to_stderr=to_stderr)
        else:
            _print_split(res, to_stderr=to_stderr)
