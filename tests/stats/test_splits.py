"""TV-SPLIT-00…04 and the behaviour of split(), kfold() and stratified_sample() (docs/stats.md)."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.errors import InputError, UsageError
from ragmeter.stats.datasets import (
    MISSING,
    RARE,
    allocate,
    kfold,
    load_manifest,
    split,
    splits_sha256,
    stratified_sample,
    verify_manifest,
)
from tests.stats.conftest import load

V = load("splits.json")
DATA = V["TV-SPLIT-00"]["input"]
ROWS = DATA["rows"]
FACTORS = DATA["factors"]
RATIOS = V["TV-SPLIT-03"]["input"]["ratios"]


def heritage_split(rows=ROWS, **options):
    kw = {"ratios": RATIOS, "factors": FACTORS, "group_key": DATA["group_key"], "min_count": 3}
    kw.update(options)
    return split(rows, **kw)


def test_split00_dataset_is_what_the_vectors_describe():
    e = V["TV-SPLIT-00"]["expected"]
    assert len(ROWS) == e["n_items"]
    assert len({r["institution_id"] for r in ROWS}) == e["n_institutions"]
    for f, counts in e["value_counts"].items():
        assert dict(Counter(str(r[f]) for r in ROWS)) == counts
    joint = Counter(tuple(str(r[f]) for f in FACTORS) for r in ROWS)
    assert len(joint) == e["n_joint_strata"]
    assert sum(1 for c in joint.values() if c == 1) == e["n_singleton_joint_strata"]
    sizes = Counter(Counter(r["institution_id"] for r in ROWS).values())
    assert {str(k): v for k, v in sizes.items()} == e["institution_size_histogram"]


def test_split01_joint_key_fails_in_scikit_learn():
    """Why ragmeter does not stratify on a joint key: 173 of 253 strata are singletons."""
    import sklearn.model_selection as sklearn

    v = V["TV-SPLIT-01"]
    y = ["|".join(str(r[f]) for f in FACTORS) for r in ROWS]
    cv = sklearn.StratifiedShuffleSplit(
        n_splits=1, test_size=v["input"]["test_size"], random_state=v["input"]["random_state"]
    )
    with pytest.raises(ValueError) as info:
        next(cv.split(y, y))
    assert f"ValueError: {info.value}".startswith(v["library_observed"]["error_prefix"])


@pytest.mark.parametrize("seed", range(5))
def test_split03_required_properties(seed):
    e = V["TV-SPLIT-03"]["expected"]
    res = heritage_split(seed=seed)
    rep = res.report
    assert (
        rep["leakage"]["groups_in_more_than_one_split"] == e["institutions_in_more_than_one_split"]
    )
    for s, (target, slack) in e["sizes_within_of_target"].items():
        assert abs(rep["sizes"][s] - target) <= slack
    assert rep["values_absent_from_split"] == {}
    for f in FACTORS:
        assert rep["max_abs_share_deviation_pp"][f] <= e["max_abs_share_deviation_pp_at_most"]
    # the institutions really are disjoint in the manifest
    inst = {r["id"]: r["institution_id"] for r in ROWS}
    owners = {}
    for s, ids in res.splits.items():
        for i in ids:
            assert owners.setdefault(inst[i], s) == s
    assert sorted(i for ids in res.splits.values() for i in ids) == sorted(inst)
    # the reference implementation's coverage pass moved one institution carrying type I
    moves = rep["coverage"]["moves"]
    assert [(m["factor"], m["value"], m["to"]) for m in moves] == [("custodian_type", "I", "test")]
    assert rep["coverage"]["failures"] == []


@pytest.mark.parametrize("seed", [0, 3])
def test_split03_same_seed_same_hash_whatever_the_row_order(seed):
    first = heritage_split(seed=seed)
    rows = ROWS[:]
    random.Random(99).shuffle(rows)
    again = heritage_split(rows, seed=seed)
    assert again.manifest == first.manifest and again.sha256 == first.sha256
    assert heritage_split(seed=seed + 10).sha256 != first.sha256


def test_split02_ragmeter_beats_every_library_baseline():
    baselines = V["TV-SPLIT-02"]["library_observed"]
    ours = heritage_split(seed=0).report
    worst_ours = max(ours["max_abs_share_deviation_pp"].values())
    for name, b in baselines.items():
        if "max_abs_share_deviation_pp" not in b:
            continue
        assert worst_ours < max(b["max_abs_share_deviation_pp"].values()), name
        assert b["values_absent_from_split"], name  # each baseline loses a value somewhere
    assert ours["values_absent_from_split"] == {}


def test_manifest_shape_and_hash(tmp_path):
    res = heritage_split(seed=0)
    m = res.manifest
    assert list(m) == [
        "format",
        "method",
        "seed",
        "ratios",
        "factors",
        "group_key",
        "rare_policy",
        "min_count",
        "coverage",
        "versions",
        "splits",
        "sha256",
    ]
    assert m["format"] == "ragmeter-split-manifest/1" and m["method"] == "group_multifactor"
    assert list(m["splits"]) == ["train", "dev", "test"]
    assert all(ids == sorted(ids) for ids in m["splits"].values())
    canonical = json.dumps(m["splits"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    import hashlib

    assert (
        m["sha256"] == hashlib.sha256(canonical.encode()).hexdigest() == splits_sha256(m["splits"])
    )
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(m), encoding="utf-8")
    assert load_manifest(path)["splits"] == m["splits"]
    tampered = dict(m, splits={**m["splits"], "test": m["splits"]["test"][1:]})
    path.write_text(json.dumps(tampered), encoding="utf-8")
    with pytest.raises(InputError, match=r"manifest.json: sha256 .* does not match the splits"):
        load_manifest(path)
    with pytest.raises(InputError, match="is in splits 'train' and 'dev'"):
        dup = {"train": ["a"], "dev": ["a"]}
        verify_manifest({"format": m["format"], "splits": dup, "sha256": splits_sha256(dup)})


def test_missing_values_and_items_without_groups():
    rows = [{"id": f"i{n}", "t": "AB"[n % 2] if n % 5 else None} for n in range(30)]
    res = split(rows, ratios=[0.6, 0.2, 0.2], factors=["t"], group_key="inst")
    assert res.report["missing_values"] == {"t": 6}
    assert MISSING in res.report["factors"]["t"]["values"]
    assert res.report["n_groups"] == 30  # each item is its own group


def test_gold_format_strata_are_read():
    rows = [
        {"id": f"s{n}", "strata": {"kind": "XY"[n % 2], "group": f"g{n // 3}"}} for n in range(24)
    ]
    res = split(rows, factors=["kind"], group_key="group", ratios=[0.5, 0.25, 0.25])
    assert res.report["leakage"]["groups_in_more_than_one_split"] == 0
    assert set(res.report["factors"]["kind"]["values"]) == {"X", "Y"}


def test_rare_policies():
    rows = [dict(r) for r in ROWS]
    kw = {"ratios": RATIOS, "factors": ["custodian_type"], "group_key": "institution_id"}
    bucket = split(rows, min_count=6, **kw)
    assert bucket.report["rare"]["bucketed"] == {"custodian_type": ["I", "S"]}
    with pytest.raises(UsageError, match=r"I \(3\), S \(5\)"):
        split(rows, min_count=6, rare_policy="error", **kw)
    merged = split(rows, min_count=6, rare_policy="merge", hierarchy="heritage", **kw)
    assert merged.report["rare"]["merged"] == {
        "custodian_type": {"I": "COMMUNITY", "S": "COMMUNITY"}
    }
    assert merged.report["rare"]["bucketed"] == {}
    pinned = split(rows, min_count=6, rare_policy="pin:test", **kw)
    test_ids = set(pinned.splits["test"])
    rare_items = {r["id"] for r in rows if r["custodian_type"] in ("I", "S")}
    rare_groups = {r["institution_id"] for r in rows if r["id"] in rare_items}
    group_items = {r["id"] for r in rows if r["institution_id"] in rare_groups}
    assert group_items <= test_ids
    assert pinned.report["rare"]["pinned"] == {
        "custodian_type=I": "test",
        "custodian_type=S": "test",
    }
    with pytest.raises(UsageError, match="names split 'holdout'"):
        split(rows, min_count=6, rare_policy="pin:holdout", **kw)
    both = {"custodian_type": "pin:test", "country": "pin:dev"}
    clash = [{"id": "a", "custodian_type": "Z", "country": "QQ", "inst": "g"}] + [
        {"id": f"x{n}", "custodian_type": "M", "country": "NL", "inst": f"h{n}"} for n in range(20)
    ]
    with pytest.raises(UsageError, match="pinned to splits"):
        split(
            clash,
            ratios=RATIOS,
            factors=["custodian_type", "country"],
            group_key="inst",
            rare_policy=both,
        )


def test_evaluation_only_ratios_and_kfold():
    res = heritage_split(ratios={"train": 0, "dev": 0.3, "test": 0.7}, min_count=None)
    assert res.report["sizes"]["train"] == 0 and res.splits["train"] == []
    assert abs(res.report["sizes"]["dev"] - 120) <= 5
    folds = kfold(ROWS, 5, factors=FACTORS, group_key="institution_id")
    assert list(folds.splits) == [f"fold{i}" for i in range(5)] and folds.manifest["kfold"] == 5
    assert all(abs(n - 80) <= 6 for n in folds.report["sizes"].values())
    assert folds.report["leakage"]["groups_in_more_than_one_split"] == 0


def test_bad_options_are_usage_errors():
    with pytest.raises(UsageError, match=r"sum to 0\.9"):
        split(ROWS, ratios=[0.7, 0.1, 0.1], factors=FACTORS)
    with pytest.raises(UsageError, match="unknown split method"):
        split(ROWS, factors=FACTORS, method="random")
    with pytest.raises(InputError, match="appears twice"):
        split([{"id": "a"}, {"id": "a"}], factors=[])
    with pytest.raises(InputError, match="not a scalar"):
        split([{"id": "a", "t": [1]}], factors=["t"])


def test_library_methods():
    with pytest.raises(UsageError, match="cannot keep groups together"):
        heritage_split(method="iterstrat")
    it = heritage_split(method="iterstrat", ignore_groups=True)
    assert sum(it.report["sizes"].values()) == 400 and it.manifest["ignore_groups"] is True
    sg = heritage_split(method="sklearn_group", primary_factor="custodian_type")
    assert sg.report["leakage"]["groups_in_more_than_one_split"] == 0
    assert sg.manifest["primary_factor"] == "custodian_type" and sg.report["n_folds"] == 7


def test_split04_stratified_sampling_allocation():
    v = V["TV-SPLIT-04"]
    sizes, n = v["input"]["stratum_sizes"], v["input"]["n"]
    e = v["expected"]
    alloc, quotas = allocate(sizes, n)
    assert alloc == e["proportional"]["allocation"]
    assert {h: float(q) for h, q in quotas.items()} == e["proportional"]["quotas"]
    alloc, quotas = allocate(sizes, n, min_per_stratum=1)
    assert alloc == e["proportional_min_per_stratum_1"]["allocation"]
    assert {h: float(q) for h, q in quotas.items()} == e["proportional_min_per_stratum_1"][
        "quotas_after_minimum"
    ]
    rows = [{"id": f"{h}{i:03d}", "t": h} for h, size in sizes.items() for i in range(size)]
    sample = stratified_sample(rows, by=["t"], n=n, seed=0)
    got = Counter(i[0] for i in sample.ids)
    assert {h: got.get(h, 0) for h in sizes} == e["proportional"]["allocation"]
    again = stratified_sample(list(reversed(rows)), by=["t"], n=n, seed=0)
    assert again.ids == sample.ids and again.manifest["sha256"] == sample.manifest["sha256"]
    assert sample.manifest["splits"] == {"sample": sample.ids}


def test_sampling_selection_rule_and_errors():
    import numpy as np

    rows = [{"id": f"i{k:02d}", "t": "AB"[k % 2]} for k in range(20)]
    s = stratified_sample(rows, by=["t"], n=5, seed=3)
    rng = np.random.default_rng(3)
    a_ids = sorted(r["id"] for r in rows if r["t"] == "A")
    b_ids = sorted(r["id"] for r in rows if r["t"] == "B")
    pa, pb = rng.permutation(10), rng.permutation(10)
    alloc = {r["stratum"]: r["allocated"] for r in s.report["strata"]}
    want = [a_ids[i] for i in pa[: alloc["A"]]] + [b_ids[i] for i in pb[: alloc["B"]]]
    assert s.ids == sorted(want)
    eq = allocate({"A": 10, "B": 2}, 6, allocation="equal")[0]
    assert eq == {"A": 4, "B": 2}  # B is at capacity, the cycle gives A the rest
    with pytest.raises(UsageError, match="larger than the 20 items"):
        stratified_sample(rows, by=["t"], n=21)
    with pytest.raises(UsageError, match="needs 2 units, more than n = 1"):
        allocate({"A": 3, "B": 3}, 1, min_per_stratum=1)
    rare = stratified_sample([*rows, {"id": "z", "t": "C"}], by=["t"], n=4, rare_policy="bucket")
    assert RARE in {r["stratum"] for r in rare.report["strata"]}


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("ABCDE"), st.sampled_from("xyz"), st.integers(0, 40)),
        min_size=5,
        max_size=120,
    ),
    st.integers(0, 10**6),
    st.sampled_from([[0.7, 0.15, 0.15], [0.0, 0.3, 0.7], [0.5, 0.5, 0.0], [0.8, 0.2]]),
    st.booleans(),
)
def test_split_invariants_on_random_data(rows, seed, ratios, coverage):
    items = [
        {"id": f"i{n:03d}", "kind": k, "lang": lang, "group": f"g{g}"}
        for n, (k, lang, g) in enumerate(rows)
    ]
    res = split(
        items,
        ratios=ratios,
        factors=["kind", "lang"],
        group_key="group",
        seed=seed,
        coverage=coverage,
    )
    owner = {}
    for s, ids in res.splits.items():
        for i in ids:
            assert i not in owner
            owner[i] = s
    assert sorted(owner) == sorted(it["id"] for it in items)
    groups: dict[str, set[str]] = {}
    for it in items:
        groups.setdefault(it["group"], set()).add(owner[it["id"]])
    assert all(len(v) == 1 for v in groups.values())
    assert res.report["leakage"]["groups_in_more_than_one_split"] == 0
    for name, r in zip(["train", "dev", "test"], ratios, strict=False):
        if r == 0:
            assert res.splits[name] == []
    shuffled = items[::-1]
    again = split(
        shuffled,
        ratios=ratios,
        factors=["kind", "lang"],
        group_key="group",
        seed=seed,
        coverage=coverage,
    )
    assert again.sha256 == res.sha256


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.sampled_from("ABCDEFGH"), st.integers(1, 50), min_size=1, max_size=8),
    st.data(),
    st.sampled_from(["proportional", "equal"]),
)
def test_allocation_invariants(sizes, data, allocation):
    total = sum(sizes.values())
    n = data.draw(st.integers(0, total))
    alloc, quotas = allocate(sizes, n, allocation=allocation)
    assert sum(alloc.values()) == n
    assert all(0 <= alloc[h] <= sizes[h] for h in sizes)
    if allocation == "proportional":
        # largest remainder never strays a whole unit from its quota
        assert all(abs(alloc[h] - quotas[h]) < 1 for h in sizes)
