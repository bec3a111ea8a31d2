"""Certificate version 2 (issue 19, goal 2): places grouped per counter and class of ops say exactly what the
version-1 op pairs said, a version-1 certificate is still compared in its own form, and a grouped place that omits
an op is refuted."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import budget_programs as bp
import pytest

from verispatial.certify.certificate import (
    VERSION,
    compare_certificate,
    derive_certificate,
    derive_place_groups,
    expand_places,
    group_places,
)
from verispatial.certify.reach import analyse
from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir.serialize import load_program, loads

ROOT = Path(__file__).resolve().parent.parent
#: Committed corpus programs whose version-1 certificates the old derivation wrote (op pairs).
CORPUS = ["examples/pipeline_small", "examples/three_sections", "examples/matmul_reuse_mcast_blackhole",
          "examples/mcast_pair", "models/state_accumulate.wormhole/accumulate"]


def _key(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


def _load(name: str) -> tuple[Any, dict[str, Any]]:
    base = ROOT / "proofs" / name
    return (load_program(base.with_name(base.name + ".program.json")),
            json.loads(base.with_name(base.name + ".certificate.json").read_text()))


@pytest.mark.parametrize("name", CORPUS)
def test_grouped_places_expand_to_the_version_1_pairs(name: str) -> None:
    p, cert = _load(name)
    assert cert["version"] == 1
    groups = derive_place_groups(analyse(p))
    pairs = expand_places(groups)
    assert len(pairs) == len(cert["places"])
    assert {_key(x) for x in pairs} == {_key(x) for x in cert["places"]}
    assert len(groups) <= len(pairs)


@pytest.mark.parametrize("name", CORPUS[:2])
def test_a_version_1_certificate_is_compared_in_its_own_form(name: str) -> None:
    p, cert = _load(name)
    report = certify(p)
    got = compare_certificate(p, analyse(p), list(report.results), cert)
    assert [r.verdict for r in got] == [Verdict.PROVED] * len(got)


def test_a_grouped_place_that_omits_an_op_is_refuted() -> None:
    p = loads(json.dumps(bp.straight(30)))  # five pushes to five waits: one group of 25 pairs
    report = certify(p)
    cert = derive_certificate(p, report)
    assert cert["version"] == VERSION == 3
    a = analyse(p)
    assert all(r.verdict == Verdict.PROVED for r in compare_certificate(p, a, list(report.results), cert))
    bad = copy.deepcopy(cert)
    group = next(g for g in bad["places"] if len(g["to"]) + len(g["from"]) > 2)
    (group["to"] if len(group["to"]) > 1 else group["from"]).pop()
    got = {r.name: r.verdict for r in compare_certificate(p, a, list(report.results), bad)}
    assert got["certificate:places"] == Verdict.REFUTED


def test_grouping_is_exact_on_any_pairs() -> None:
    """``group_places`` of any set of op pairs expands back to exactly that set, each group a product of pairs
    that all occur."""
    rng = random.Random(7)
    ops = [{"engine": f"e{i % 3}", "path": [i], "op": "Push"} for i in range(8)]
    for _ in range(200):
        pairs = [{"kind": rng.choice(["cb-data", "cb-space"]), "counter": "cb0", "from": rng.choice(ops),
                  "to": rng.choice(ops), "tokens": rng.choice([0, 2])} for _ in range(rng.randrange(1, 30))]
        groups = group_places(pairs)
        assert {_key(x) for x in expand_places(groups)} == {_key(x) for x in pairs}
        assert len(expand_places(groups)) == len({_key(x) for x in pairs})
