"""Records without ``ner_annotations`` in heritage JSON: not annotated, so not documents.

An absent key is not an empty list (docs/conventions.md, "Absent is not empty"), the rule the
runner's gold set follows; the commands that read heritage JSON spans (``ner``, ``link --e2e``,
``agreement``) apply it through :func:`drop_unannotated`.
"""

from __future__ import annotations

from typing import Any

from ragmeter.errors import InputError

__all__ = ["drop_unannotated"]


def drop_unannotated(corpora: list[Any], paths: list[str], *, sides: int = 1) -> list[str]:
    """Leave out records without ``ner_annotations``, as the runner does; return warnings.

    An absent key is not an empty list: ``"ner_annotations": []`` is a document with no
    entities (every prediction spurious), a record without the key is not annotated for NER
    (a QA-only sample of a shared gold set) and is no document of the task. The first
    ``sides`` corpora are annotations (gold, or every annotator for agreement); a document one
    of them leaves unannotated is dropped from all corpora. Heritage JSON only: other formats
    have no such key.
    """
    from ragmeter.io.heritage import _KEYS_META

    absent: list[str] = []
    for corpus, path in zip(corpora[:sides], paths, strict=False):
        own = [
            doc_id
            for doc_id, doc in corpus.documents.items()
            if doc.meta.get(_KEYS_META) is not None
            and "ner_annotations" not in doc.meta[_KEYS_META]
        ]
        if own and len(own) == len(corpus.documents):
            raise InputError(
                "no record has ner_annotations (expected a list on each record annotated for "
                "NER; [] for a document without entities)",
                path=path,
            )
        absent.extend(d for d in own if d not in absent)
    if not absent:
        return []
    for corpus in corpora:
        for doc_id in absent:
            corpus.documents.pop(doc_id, None)
            corpus.spans.pop(doc_id, None)
    shown = ", ".join(repr(d) for d in absent[:5]) + (", ..." if len(absent) > 5 else "")
    where = paths[0] if sides == 1 else ", ".join(paths[:sides])
    return [
        f"{where}: {len(absent)} record(s) without ner_annotations not scored ({shown}); "
        'give "ner_annotations": [] for a document without entities'
    ]
