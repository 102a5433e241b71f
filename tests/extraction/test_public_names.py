"""A submodule named like a public function of ``ragmeter.extraction`` would shadow it: once the
submodule is imported, ``from ragmeter.extraction import NAME`` gives the module (it happened with
``span_agreement``)."""

from __future__ import annotations

import importlib
import pkgutil

import ragmeter.extraction as extraction


def test_no_submodule_shadows_a_public_name():
    submodules = {m.name for m in pkgutil.iter_modules(extraction.__path__)}
    assert not submodules & set(extraction._LAZY)


def test_every_public_name_is_what_it_says_after_every_submodule_is_imported():
    for m in pkgutil.iter_modules(extraction.__path__):
        importlib.import_module(f"ragmeter.extraction.{m.name}")
    for name in extraction._LAZY:
        value = getattr(extraction, name)
        assert not isinstance(value, type(extraction)), name
