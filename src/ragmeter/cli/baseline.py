"""``ragmeter baseline {bm25,dense,hybrid,rrf,classify,link,all}``: offline reference systems.

Each command writes its output in a format ragmeter already evaluates (TREC or JSONL runs,
``{id, label}`` type records, ``{mention_id, candidates, nil}`` links) plus a ``.meta.json``
sidecar. See docs/baselines.md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.cli.baseline_work import do_bm25, link_records, progress_bar

Opt = typer.Option


def _corpus(
    path: Path, id_field: str | None, text_field: str | None, title_field: str, no_title: bool
) -> Any:
    from ragmeter.baselines.inputs import read_corpus

    return read_corpus(
        path,
        id_field=id_field,
        text_field=text_field,
        title_field=None if no_title else title_field,
    )


def _finish(
    output: Path, side: Any, as_json: bool, corpus: Any = None, run: Any = None, command: str = ""
) -> None:
    from ragmeter.baselines.produce import write_sidecar

    if corpus is not None and corpus.empty:
        side.warn(
            f"{corpus.empty} documents have an empty text and can never be retrieved", command
        )
    if run is not None and run.empty:
        side.data["queries_without_results"] = list(run.empty)
        side.warn(
            f"{len(run.empty)} queries have no results (first: {run.empty[0]}); evaluate "
            "with ragmeter trec -c so that they count as 0",
            command,
        )
    side.lap("write")
    write_sidecar(output, side)
    if as_json:
        typer.echo(json.dumps(side.data, indent=1, ensure_ascii=False))


def register(app: typer.Typer) -> None:
    bl = typer.Typer(
        help="Offline baseline systems (BM25, dense, RRF, keyword types, exact/fuzzy links).",
        no_args_is_help=True,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.add_typer(bl, name="baseline")

    @bl.command("bm25")
    def bm25(
        corpus: Annotated[Path, Opt("--corpus", help="JSONL corpus {id, text, title?}.")],
        queries: Annotated[Path, Opt("--queries", help="Queries: JSONL, TSV or gold file.")],
        output: Annotated[Path, Opt("-o", "--output", help="Run file (.jsonl: JSONL run).")],
        k: Annotated[int, Opt("-k", min=1, help="Documents per query.")] = 100,
        preset: Annotated[str, Opt(help="default (Anserini) or ultrarag.")] = "default",
        method: Annotated[str | None, Opt(help="lucene|robertson|atire|bm25l|bm25+")] = None,
        k1: Annotated[float | None, Opt("--k1")] = None,
        b: Annotated[float | None, Opt("--b")] = None,
        delta: Annotated[float | None, Opt("--delta")] = None,
        language: Annotated[str, Opt(help="Stopwords and stemmer language.")] = "en",
        stopwords: Annotated[str | None, Opt(help="auto, none or a file.")] = None,
        stemmer: Annotated[str | None, Opt(help="snowball or none.")] = None,
        index: Annotated[Path | None, Opt(help="Save/reuse the index here.")] = None,
        tag: Annotated[str, Opt(help="Run tag.")] = "ragmeter-bm25",
        queries_format: Annotated[str, Opt(help="auto|jsonl|tsv|ragmeter")] = "auto",
        id_field: Annotated[str | None, Opt()] = None,
        text_field: Annotated[str | None, Opt()] = None,
        title_field: Annotated[str, Opt()] = "title",
        no_title: Annotated[bool, Opt("--no-title")] = False,
        as_json: Annotated[bool, Opt("--json", help="Print the sidecar.")] = False,
    ) -> int:
        """BM25 (bm25s) run: Lucene scoring, Snowball stemming, ties by id as evaluated."""
        from ragmeter.baselines.bm25 import resolve_params
        from ragmeter.baselines.inputs import read_queries
        from ragmeter.baselines.produce import Sidecar

        params = {
            "method": method,
            "k1": k1,
            "b": b,
            "delta": delta,
            "stopwords": stopwords,
            "stemmer": stemmer,
        }
        resolve_params(preset, **params)  # usage errors before any input is read
        docs = _corpus(corpus, id_field, text_field, title_field, no_title)
        qs = read_queries(queries, fmt=queries_format)
        side = Sidecar("bm25", {"k": k, "preset": preset, "language": language, "tag": tag})
        side.input(corpus, len(docs), "corpus")
        side.input(queries, len(qs), "queries")
        run = do_bm25(
            docs,
            qs,
            output,
            k=k,
            preset=preset,
            language=language,
            index=index,
            tag=tag,
            side=side,
            **params,
        )
        _finish(output, side, as_json, docs, run, "ragmeter baseline bm25")
        return 0

    @bl.command("dense")
    def dense(
        corpus: Annotated[Path, Opt("--corpus")],
        queries: Annotated[Path, Opt("--queries")],
        output: Annotated[Path, Opt("-o", "--output")],
        k: Annotated[int, Opt("-k", min=1)] = 100,
        embedder_path: Annotated[Path | None, Opt(help="Local sentence-transformers dir.")] = None,
        device: Annotated[str, Opt()] = "cpu",
        chunk_words: Annotated[int | None, Opt(min=1)] = None,
        chunk_stride: Annotated[int | None, Opt(min=1)] = None,
        cache_dir: Annotated[Path, Opt()] = Path(".ragmeter/cache/embeddings"),
        no_cache: Annotated[bool, Opt("--no-cache")] = False,
        tag: Annotated[str, Opt()] = "ragmeter-dense",
        queries_format: Annotated[str, Opt()] = "auto",
        as_json: Annotated[bool, Opt("--json")] = False,
    ) -> int:
        """Dense run with the bundled all-MiniLM-L6-v2: exact cosine search, cached embeddings."""
        from ragmeter.answers.semantic import load_minilm
        from ragmeter.baselines.dense import DenseIndex
        from ragmeter.baselines.inputs import read_corpus, read_queries
        from ragmeter.baselines.produce import Sidecar
        from ragmeter.baselines.runs import write_run

        docs = read_corpus(corpus)
        qs = read_queries(queries, fmt=queries_format)
        embedder = load_minilm(path=embedder_path, device=device)
        side = Sidecar(
            "dense",
            {
                "k": k,
                "chunk_words": chunk_words,
                "chunk_stride": chunk_stride,
                "tag": tag,
                "device": device,
            },
        )
        side.input(corpus, len(docs), "corpus")
        side.input(queries, len(qs), "queries")
        update, stop = progress_bar(len(docs), "encoding documents")
        try:
            index = DenseIndex.build(
                docs,
                embedder,
                cache_dir=None if no_cache else cache_dir,
                chunk_words=chunk_words,
                chunk_stride=chunk_stride,
                progress=update,
            )
        finally:
            stop()
        side.data["truncated_documents"] = index.truncated
        side.data["embedding_cache_hit"] = index.cache_hit
        if index.truncated:
            side.warn(
                f"{index.truncated} documents exceed the model's input length and were "
                "truncated (see --chunk-words)",
                "ragmeter baseline dense",
            )
        side.lap("encode")
        run = index.search(embedder, qs, k)
        write_run(run, output, tag=tag)
        _finish(output, side, as_json, docs, run, "ragmeter baseline dense")
        return 0

    @bl.command("rrf")
    def rrf_cmd(
        runs: Annotated[list[Path], typer.Argument(help="Run files to fuse (TREC or .jsonl).")],
        output: Annotated[Path, Opt("-o", "--output")],
        k: Annotated[int, Opt("-k", min=1)] = 100,
        depth: Annotated[int, Opt(min=1)] = 1000,
        rrf_k: Annotated[float, Opt("--rrf-k")] = 60.0,
        weights: Annotated[str | None, Opt(help="Comma-separated, one per run.")] = None,
        source_names: Annotated[str | None, Opt(help="Comma-separated names.")] = None,
        tag: Annotated[str, Opt()] = "ragmeter-rrf",
        as_json: Annotated[bool, Opt("--json")] = False,
    ) -> int:
        """Reciprocal rank fusion of existing runs (ranks in evaluation order)."""
        from ragmeter.baselines.fusion import read_any_run, rrf
        from ragmeter.baselines.produce import Sidecar
        from ragmeter.baselines.runs import write_run

        w = _floats(weights, "--weights")
        names = source_names.split(",") if source_names else [p.stem for p in runs]
        inputs = [read_any_run(p) for p in runs]
        side = Sidecar(
            "rrf",
            {"k": k, "depth": depth, "rrf_k": rrf_k, "weights": w, "sources": names, "tag": tag},
        )
        for p, r in zip(runs, inputs, strict=True):
            side.input(p, len(r.qids), "run")
        fused = rrf(inputs, k=k, c=rrf_k, weights=w, depth=depth, names=names)
        write_run(fused, output, tag=tag)
        _finish(output, side, as_json, command="ragmeter baseline rrf")
        return 0

    @bl.command("hybrid")
    def hybrid(
        corpus: Annotated[Path, Opt("--corpus")],
        queries: Annotated[Path, Opt("--queries")],
        output: Annotated[Path, Opt("-o", "--output")],
        k: Annotated[int, Opt("-k", min=1)] = 100,
        depth: Annotated[int, Opt(min=1)] = 1000,
        rrf_k: Annotated[float, Opt("--rrf-k")] = 60.0,
        weights: Annotated[str | None, Opt(help="bm25,dense weights.")] = None,
        language: Annotated[str, Opt()] = "en",
        cache_dir: Annotated[Path, Opt()] = Path(".ragmeter/cache/embeddings"),
        tag: Annotated[str, Opt()] = "ragmeter-rrf",
        as_json: Annotated[bool, Opt("--json")] = False,
    ) -> int:
        """BM25 (default preset) + dense fused by RRF; a .jsonl output carries sources."""
        from ragmeter.answers.semantic import load_minilm
        from ragmeter.baselines.bm25 import BM25Index
        from ragmeter.baselines.dense import DenseIndex
        from ragmeter.baselines.fusion import rrf
        from ragmeter.baselines.inputs import read_corpus, read_queries
        from ragmeter.baselines.produce import Sidecar
        from ragmeter.baselines.runs import write_run

        w = _floats(weights, "--weights")
        docs = read_corpus(corpus)
        qs = read_queries(queries)
        side = Sidecar(
            "hybrid",
            {
                "k": k,
                "depth": depth,
                "rrf_k": rrf_k,
                "weights": w,
                "language": language,
                "tag": tag,
            },
        )
        side.input(corpus, len(docs), "corpus")
        side.input(queries, len(qs), "queries")
        lexical = BM25Index.build(docs, language=language).search(qs, depth)
        embedder = load_minilm()
        semantic = DenseIndex.build(docs, embedder, cache_dir=cache_dir).search(embedder, qs, depth)
        fused = rrf(
            [lexical, semantic], k=k, c=rrf_k, weights=w, depth=depth, names=["bm25", "dense"]
        )
        write_run(fused, output, tag=tag)
        _finish(output, side, as_json, docs, command="ragmeter baseline hybrid")
        return 0

    @bl.command("classify")
    def classify(
        input_: Annotated[Path, Opt("--input", help="Gold file or JSONL {id, text}.")],
        output: Annotated[Path, Opt("-o", "--output")],
        keywords: Annotated[str, Opt(help="heritage or a YAML keyword file.")] = "heritage",
        text_field: Annotated[str, Opt()] = "text",
        id_field: Annotated[str, Opt()] = "id",
        multi_label: Annotated[bool, Opt("--multi-label")] = False,
        as_json: Annotated[bool, Opt("--json")] = False,
    ) -> int:
        """Keyword type classifier: {id, label, scores, matched} per sample."""
        from ragmeter.baselines.keywords import KeywordClassifier
        from ragmeter.baselines.produce import Sidecar, write_jsonl

        clf = KeywordClassifier.load(keywords, multi_label=multi_label)
        items = read_texts(input_, id_field, text_field)
        side = Sidecar("classify", {"keywords": keywords, "multi_label": multi_label})
        side.input(input_, len(items), "input")
        write_jsonl(output, clf.predict(items))
        _finish(output, side, as_json, command="ragmeter baseline classify")
        return 0

    @bl.command("link")
    def link(
        method: Annotated[str, typer.Argument(help="exact or fuzzy.")],
        labels: Annotated[Path, Opt("--labels", help="TSV or JSONL knowledge-base names.")],
        mentions: Annotated[Path, Opt("--mentions", help="Gold file or {mention_id, mention}.")],
        output: Annotated[Path, Opt("-o", "--output")],
        k: Annotated[int, Opt("-k", min=1)] = 10,
        scorer: Annotated[str, Opt()] = "token_sort_ratio",
        min_score: Annotated[float, Opt(min=0, max=1)] = 0.60,
        nil_threshold: Annotated[float, Opt(min=0, max=1)] = 0.85,
        fold_accents: Annotated[bool, Opt("--fold-accents")] = False,
        workers: Annotated[int, Opt(help="rapidfuzz workers (-1: all cores).")] = -1,
        as_json: Annotated[bool, Opt("--json")] = False,
    ) -> int:
        """Exact or fuzzy (rapidfuzz) entity links with NIL flags."""
        from ragmeter.baselines.produce import Sidecar, write_jsonl

        if method not in ("exact", "fuzzy"):
            from ragmeter.errors import UsageError

            raise UsageError(f"ragmeter baseline link: method {method!r} (expected exact or fuzzy)")
        records, n_ents, n_ments, _ = link_records(
            method,
            labels,
            mentions,
            k=k,
            scorer=scorer,
            min_score=min_score,
            nil_threshold=nil_threshold,
            fold_accents=fold_accents,
            workers=workers,
        )
        side = Sidecar(
            f"link-{method}",
            {
                "k": k,
                "scorer": scorer,
                "min_score": min_score,
                "nil_threshold": nil_threshold,
                "fold_accents": fold_accents,
            },
        )
        side.input(labels, n_ents, "labels")
        side.input(mentions, n_ments, "mentions")
        write_jsonl(output, records)
        _finish(output, side, as_json, command="ragmeter baseline link")
        return 0

    from ragmeter.cli.baseline_all import register_all

    register_all(bl)


def _floats(text: str | None, flag: str) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        from ragmeter.errors import UsageError

        raise UsageError(f"{flag} {text!r} (expected comma-separated numbers)") from None


def read_texts(path: Path, id_field: str = "id", text_field: str = "text") -> list[tuple]:
    """``(id, text)`` per JSONL line (gold samples or plain records), checked up front."""
    from ragmeter.errors import InputError
    from ragmeter.io.jsonl import iter_jsonl
    from ragmeter.io.jsonutil import json_type

    name = os.fspath(path)
    out, seen = [], {}
    for line, obj in iter_jsonl(path):
        sid, text = obj.get(id_field), obj.get(text_field)
        if not isinstance(sid, str) or not sid:
            raise InputError(
                f"{id_field} is {json_type(sid)} (expected a non-empty string)",
                path=name,
                line=line,
            )
        if sid in seen:
            raise InputError(
                f"id {sid!r} appears twice (first at line {seen[sid]})", path=name, line=line
            )
        if not isinstance(text, str):
            raise InputError(
                f"{text_field} is {json_type(text)} (expected the sample's text)",
                path=name,
                line=line,
            )
        seen[sid] = line
        out.append((sid, text))
    return out
