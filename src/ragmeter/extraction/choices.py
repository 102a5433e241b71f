"""The named choices of the extraction engines (docs/extraction.md), in one place.

The engines validate against these tuples and ``ragmeter ner``, ``classify``, ``link`` and
``agreement`` offer exactly them. They live in this import-light module because the engine
modules load numpy, and the command line reads its choices every time it starts. Each
``Literal`` is the type of the engine's argument; its tuple is derived from it, so the two
cannot drift. The loaders' choices (offset units, offset mismatches) are in
:mod:`ragmeter.records.choices`.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "EMPTY_DOCUMENTS",
    "EXTRA_POLICIES",
    "INVALID_GOLD_POLICIES",
    "LEVELS",
    "LINK_MATCHES",
    "LINK_MATCHINGS",
    "LINK_SUBSETS",
    "MISSING_POLICIES",
    "NER_DUPLICATES",
    "NER_MODES",
    "UNKNOWN_DOCUMENTS",
    "EmptyDocuments",
    "ExtraPolicy",
    "InvalidGoldPolicy",
    "Level",
    "LinkMatch",
    "LinkMatching",
    "LinkSubset",
    "MissingPolicy",
    "NerDuplicates",
    "NerMode",
    "UnknownDocuments",
]

# -- NER and end-to-end linking -----------------------------------------------------------------
NerMode = Literal["lenient", "strict"]
"""Decoding of tag sequences: seqeval's default (conlleval) or its strict mode."""
NER_MODES: tuple[NerMode, ...] = get_args(NerMode)

NerDuplicates = Literal["dedupe", "keep"]
"""Identical predicted spans: count one, or count the extra copies as spurious."""
NER_DUPLICATES: tuple[NerDuplicates, ...] = get_args(NerDuplicates)

UnknownDocuments = Literal["error", "ignore", "as_empty_gold"]
"""Predictions for documents the gold lacks."""
UNKNOWN_DOCUMENTS: tuple[UnknownDocuments, ...] = get_args(UnknownDocuments)

EmptyDocuments = Literal["perfect", "skip"]
"""A document with no gold and no predicted span in the macro average: scores 1 or is left out."""
EMPTY_DOCUMENTS: tuple[EmptyDocuments, ...] = get_args(EmptyDocuments)

LinkMatch = Literal["strong", "weak"]
"""End-to-end linking: same start and end, or overlapping spans."""
LINK_MATCHES: tuple[LinkMatch, ...] = get_args(LinkMatch)

LinkSubset = Literal["all", "inkb", "ee", "gs_inkb"]
"""The annotations end-to-end linking scores (GERBIL's subsets)."""
LINK_SUBSETS: tuple[LinkSubset, ...] = get_args(LinkSubset)

LinkMatching = Literal["optimal", "gerbil"]
"""One-to-one maximum matching, or GERBIL's greedy order."""
LINK_MATCHINGS: tuple[LinkMatching, ...] = get_args(LinkMatching)

# -- classification -----------------------------------------------------------------------------
MissingPolicy = Literal["error", "as_invalid"]
"""Gold items without a prediction."""
MISSING_POLICIES: tuple[MissingPolicy, ...] = get_args(MissingPolicy)

ExtraPolicy = Literal["error", "ignore"]
"""Predictions for items the gold lacks."""
EXTRA_POLICIES: tuple[ExtraPolicy, ...] = get_args(ExtraPolicy)

InvalidGoldPolicy = Literal["error", "drop_items"]
"""Gold labels outside the profile's vocabulary."""
INVALID_GOLD_POLICIES: tuple[InvalidGoldPolicy, ...] = get_args(InvalidGoldPolicy)

# -- agreement ----------------------------------------------------------------------------------
Level = Literal["nominal", "ordinal", "interval", "ratio"]
"""Level of measurement of the ratings (Krippendorff's alpha distance)."""
LEVELS: tuple[Level, ...] = get_args(Level)
