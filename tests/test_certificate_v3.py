"""Certificate version 3 (issue 19, goal 2): a composed program's rendezvous is one place entry that expands to exactly
the version-2 arrival and release places; a proved obligation is stated by family and name; certificates of
versions 1 and 2 are still compared in their own form; a misstated rendezvous entry is refuted."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from verispatial.certify.certificate import (
    VERSION,
    _certificate,
    compare_certificate,
    derive_certificate,
    expand_places,
    version2_places,
)
from verispatial.certify.reach import Analysis, analyse
from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir.program import Program
from verispatial.ir.serialize import load_program
from verispatial.ir.target import WORMHOLE
from verispatial.passes import Pipeline
from verispatial.passes.compile import compile_model, compose_step
from verispatial.passes.pipeline import capped_passes

ROOT = Path(__file__).resolve().parent.parent


def _key(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


@pytest.fixture(scope="module")
def step() -> tuple[Program, Analysis]:
    spec = importlib.util.spec_from_file_location("build_models", ROOT / "examples" / "models" / "build_models.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    g = mod.decode_step(mod.LLAMA, layers=1)
    sections = compile_model(g, WORMHOLE, pipeline=Pipeline(capped_passes(1, 1, 1)), check=False)
    p = compose_step(g, sections, WORMHOLE, check=False).program
    return p, analyse(p)


def test_the_rendezvous_entry_expands_to_the_version_2_places(step: tuple[Program, Analysis]) -> None:
    p, a = step
    v3, v2 = _certificate(p, a, [], 3), _certificate(p, a, [], 2)
    (entry,) = [g for g in v3["places"] if g["kind"] == "rendezvous"]
    assert len(entry["boundaries"]) == len(p.sections) - 1
    assert not [g for g in v3["places"] if g["kind"].startswith("rendezvous-")]
    assert sorted(map(_key, version2_places(v3["places"]))) == sorted(map(_key, v2["places"]))
    assert sorted(map(_key, expand_places(v3["places"]))) == sorted(map(_key, expand_places(v2["places"])))
    assert len(json.dumps(v3["places"])) < len(json.dumps(v2["places"]))
    # Both forms are compared in their own form.
    for cert in (v3, v2, _certificate(p, a, [], 1)):
        got = compare_certificate(p, a, [], cert)
        assert [r.verdict for r in got] == [Verdict.PROVED] * len(got), cert["version"]


@pytest.mark.parametrize("change", ["starts", "participants", "boundaries"])
def test_a_misstated_rendezvous_entry_is_refuted(step: tuple[Program, Analysis], change: str) -> None:
    p, a = step
    cert = copy.deepcopy(_certificate(p, a, [], 3))
    entry = next(g for g in cert["places"] if g["kind"] == "rendezvous")
    if change == "starts":
        key = entry["participants"][-1]
        entry["starts"][key][1] += 1
    elif change == "participants":
        entry["participants"].pop()
    else:
        entry["boundaries"].pop()
    got = {r.name: r.verdict for r in compare_certificate(p, a, [], cert)}
    assert got["certificate:places"] == Verdict.REFUTED


def test_a_proved_obligation_is_stated_by_family_and_name() -> None:
    p = load_program(ROOT / "examples" / "pipeline_small.json")
    report = certify(p)
    cert = derive_certificate(p, report)
    assert cert["version"] == VERSION == 3
    assert all(set(o) == {"family", "name"} for o in cert["obligations"])
    assert len(cert["obligations"]) == len(report.results)
    got = compare_certificate(p, analyse(p), list(report.results), cert)
    assert [r.verdict for r in got] == [Verdict.PROVED] * len(got)
    # A version-2 certificate of the same program (every obligation with its reason) still compares.
    old = _certificate(p, analyse(p), list(report.results), 2)
    assert all("reason" in o for o in old["obligations"])
    got = compare_certificate(p, analyse(p), list(report.results), old)
    assert [r.verdict for r in got] == [Verdict.PROVED] * len(got)
