"""Each retrieval measure family is one declaration next to its kernel, and the registry entry,
the name grammars and the engine all read that declaration."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ragmeter.registry import resolve
from ragmeter.retrieval import measures
from ragmeter.retrieval.measures import FAMILIES, MEASURES, ORDER
from ragmeter.retrieval.measures.family import Family
from ragmeter.retrieval.names import parse_measures, resolve_one
from ragmeter.retrieval.registry import TASKS, family_def

GROUPS = [
    measures.ap,
    measures.bpref,
    measures.counts,
    measures.coverage,
    measures.gain,
    measures.infap,
    measures.interpolated,
    measures.precision,
    measures.rbp,
    measures.rr,
    measures.sets,
]


def test_every_family_has_a_formula_and_a_literature_citation():
    assert len(FAMILIES) == 44
    for fam in FAMILIES.values():
        d = family_def(fam.name)
        assert fam.formula and d.formula == fam.formula, fam.name
        assert fam.citation and d.citation == fam.citation, fam.name
        # a paper, a book or a standard's own documentation; never the project's own pages
        assert "docs/" not in fam.citation and "ragmeter" not in fam.citation, fam.name


@pytest.mark.parametrize(
    ("family", "formula", "cited"),
    [
        ("num_rel_ret", "hits(n) = |{d ∈ run : rel(d) ≥ ℓ}|", "Common Evaluation Measures"),
        ("map", "(1/R)·Σⱼ j/iⱼ", "Buckley and Voorhees"),
        ("ndcg_cut", "DCG(k)/IDCG(k)", "Järvelin and Kekäläinen"),
        ("ndcg_cut_exp", "DCG(k)/IDCG(k) with gains 2^g − 1", "Burges et al."),
        ("bpref", "(1/R)·Σ (1 − min(m, R)/min(N, R))", "Incomplete Information"),
        ("infAP", "ε = 1e-5", "Yilmaz and Aslam"),
        ("rbp", "(1 − p)·Σᵢ ĝ(dᵢ)·p^(i−1)", "Moffat and Zobel"),
        ("recip_rank", "1/i₁", "Kantor and Voorhees"),
        ("P", "hits(k)/k", "van Rijsbergen"),
        ("11pt_avg", "IPrec@r", "Salton and McGill"),
        ("G", "log₂(2 + S_cost(i) − S_res(i))", "experimental measure, 2008"),
    ],
)
def test_formula_and_citation_of_a_family(family, formula, cited):
    fam = FAMILIES[family]
    assert formula in fam.formula
    assert cited in fam.citation


def test_a_declaration_without_formula_or_citation_is_refused():
    with pytest.raises(ValueError, match="needs a formula and a citation"):
        Family("x", "scalar", "x", formula="", citation="a paper", registry_name="x")
    with pytest.raises(ValueError, match="needs a formula and a citation"):
        Family("x", "scalar", "x", formula="1/i₁", citation="", registry_name="x")


def test_each_declaration_lives_next_to_its_kernel():
    declared = [fam for module in GROUPS for fam in module.FAMILIES]
    assert sorted(f.name for f in declared) == sorted(ORDER)
    for module in GROUPS:
        for fam in module.FAMILIES:
            if fam.kernel is not None:
                assert fam.kernel.__module__ == module.__name__, fam.name
    # the engine fills in the two families that need no ranking
    assert {f.name for f in declared if f.kernel is None} == {"runid", "num_q"}
    assert {f.name: f.kernel for f in FAMILIES.values() if f.kernel is not None} == MEASURES


def test_canonical_order_is_trec_eval_table_then_extensions():
    assert ORDER[:6] == ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map")
    first_ext = next(i for i, n in enumerate(ORDER) if FAMILIES[n].extension)
    assert ORDER[first_ext - 1] == "unj"
    assert all(FAMILIES[n].extension for n in ORDER[first_ext:])
    assert [m.family for m in parse_measures("success_all.5 unj.5 runid P.5")] == [
        "runid",
        "P",
        "unj",
        "success_all",
    ]


def test_spellings_are_declared_once():
    spellings = [s for f in FAMILIES.values() for s in f.ir_spellings]
    assert len(spellings) == len(set(spellings))
    for fam in FAMILIES.values():
        for s in fam.ir_spellings:
            name = s + {"cut": "@10", "point": "@0.5"}.get(fam.kind, "")
            [m] = parse_measures(name)
            assert m.family == fam.name, name


def test_registry_entries_come_from_the_declarations():
    (task,) = TASKS
    assert [m.name for m in task.metrics] == [f.registry_name for f in FAMILIES.values()]
    for fam in FAMILIES.values():
        d = family_def(fam.name)
        assert (d.aliases, d.params, d.reference, d.level, d.default) == (
            fam.aliases,
            fam.params,
            fam.reference,
            fam.level,
            fam.default,
        )
        # every single-valued alias names this family, in the registry and in the grammar
        for alias in fam.aliases:
            assert resolve(alias, task="retrieval").definition is d
            assert resolve_one(alias).family == fam.name  # type: ignore[union-attr]
    assert [f.name for f in FAMILIES.values() if f.default] == [
        "map",
        "recip_rank",
        "P",
        "recall",
        "ndcg_cut",
    ]


def test_bare_parameters_depend_on_the_grammar_only_where_declared():
    assert FAMILIES["rbp"].default_params("trec") == (("p", 0.9),)
    assert FAMILIES["rbp"].default_params("ir") == (("p", 0.8),)
    assert FAMILIES["set_F"].default_params("ir") == (("beta", 1.0),)
    [trec] = parse_measures("rbp")
    [ir] = parse_measures("RBP")
    assert (trec.param("p"), ir.param("p")) == (0.9, 0.8)


def test_registry_import_stays_off_pyarrow_and_the_kernels():
    src = Path(__file__).resolve().parents[2] / "src"
    code = (
        "import sys; import ragmeter.retrieval.registry; "
        "print(sorted(m for m in ('pyarrow', 'ragmeter.retrieval.kernels', "
        "'ragmeter.io.trec') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == "[]"
