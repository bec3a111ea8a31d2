"""Identical sections share one proof (issue 19, goal 2; ``driver/shared.py``): a compiled model's sections equal up
to their tensor and trip names are certified once, and every copy gets the same results, in its own names, as if it
had been certified itself; a section differing in anything a rule reads (here: one buffer's ``persistent`` flag) has
its own key and its own proof; a changed layer re-proves only its changed sections."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import attrs
import pytest

from verispatial.certify.certificate import compare_certificate, derive_certificate
from verispatial.certify.reach import analyse
from verispatial.certify.report import Report, Verdict
from verispatial.driver.run import certify
from verispatial.driver.shared import SharedSections, canonical
from verispatial.ir.program import Program
from verispatial.ir.target import WORMHOLE
from verispatial.passes import Pipeline
from verispatial.passes.compile import CompiledSection, compile_model
from verispatial.passes.pipeline import capped_passes

MODELS = Path(__file__).resolve().parent.parent / "examples" / "models"


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_models", MODELS / "build_models.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def sections() -> list[CompiledSection]:
    mod = _builder()
    g = mod.decode_step(mod.LLAMA, layers=2)
    return compile_model(g, WORMHOLE, pipeline=Pipeline(capped_passes(1, 1, 1)), check=False)


def _facts(r: Report) -> set[tuple[str, str, Verdict]]:
    return {(x.family, x.name, x.verdict) for x in r.results}


def test_each_layers_copy_of_a_section_has_the_key_of_the_first_layers(sections: list[CompiledSection]) -> None:
    by = {s.name: s.program for s in sections}
    for op in ("q_proj", "k_proj", "attention", "swiglu", "down_proj", "k_cache_update"):
        a, b = canonical(by[f"l0.{op}"]), canonical(by[f"l1.{op}"])
        assert a is not None
        assert b is not None
        assert a.key == b.key, op
        assert a.tensors != b.tensors  # the layers' own tensors, l0.* against l1.*
    keys = {c.key for c in (canonical(s.program) for s in sections) if c is not None}
    assert len(keys) == 12  # of 33 sections: embed, the norms, 9 layer ops, the LM head


def test_a_shared_report_and_certificate_equal_the_sections_own(sections: list[CompiledSection]) -> None:
    shared = SharedSections()
    picked = [s for s in sections if s.name.split(".")[-1] in ("k_proj", "v_proj", "k_cache_update", "attention")]
    for s in picked:
        got, cert = shared.certify(s.program, lambda q: certify(q), with_certificate=True)
        own = certify(s.program)
        assert got.program == s.program.name
        assert _facts(got) == _facts(own)
        assert all(x.verdict == Verdict.PROVED for x in own.results)
        mine = derive_certificate(s.program, own)
        assert cert is not None
        assert {k: v for k, v in cert.items() if k != "obligations"} == {
            k: v for k, v in mine.items() if k != "obligations"}
        assert [(o["family"], o["name"]) for o in cert["obligations"]] == [
            (o["family"], o["name"]) for o in mine["obligations"]]
        # The section's own certificate check accepts the shared one.
        assert all(r.verdict == Verdict.PROVED
                   for r in compare_certificate(s.program, analyse(s.program), list(own.results), cert))
    # k_proj and v_proj are one class, each cache update and attention another: 8 sections, 3 proofs.
    assert (shared.computed, shared.shared) == (3, 5)
    reused = next(r for r in shared.certify(picked[-1].program, lambda q: certify(q))[0].results)
    assert "equal up to renaming; section content" in reused.reason


def _persistent(p: Program, buf: int) -> Program:
    return attrs.evolve(p, buffers=tuple(attrs.evolve(b, persistent=True) if b.id == buf else b for b in p.buffers))


def test_a_section_differing_in_one_persistent_flag_does_not_share_a_proof(sections: list[CompiledSection]) -> None:
    by = {s.name: s.program for s in sections}
    base = by["l0.k_cache_update"]
    bent = _persistent(by["l1.k_cache_update"], 0)
    a, b = canonical(base), canonical(bent)
    assert a is not None
    assert b is not None
    assert a.key != b.key
    shared = SharedSections()
    calls: list[Program] = []

    def run(q: Program) -> Report:
        calls.append(q)
        return certify(q)

    shared.certify(base, run)
    got, _ = shared.certify(bent, run)
    assert len(calls) == 2
    assert (shared.computed, shared.shared) == (2, 0)
    assert _facts(got) == _facts(certify(bent))


def test_a_changed_layer_re_proves_only_what_changed(sections: list[CompiledSection]) -> None:
    # Layer 1's v projection gets a deeper input ring: every other section of both layers still shares.
    def deeper(p: Program) -> Program:
        return attrs.evolve(p, buffers=tuple(attrs.evolve(b, capacity=b.capacity * 2) if b.id == 0 else b
                                             for b in p.buffers))

    progs = [deeper(s.program) if s.name == "l1.v_proj" else s.program for s in sections]
    shared = SharedSections()
    seen: list[str] = []

    def run(q: Program) -> Report:
        seen.append(q.name)
        return Report(q.name, q.target.name, ())  # what a proof says is not the question here: who is asked

    for p in progs:
        shared.certify(p, run)
    assert len(seen) == 13
    assert (shared.computed, shared.shared) == (13, 20)


def test_a_name_holding_the_canonical_marker_is_never_shared(sections: list[CompiledSection]) -> None:
    p = sections[1].program
    odd = attrs.evolve(p, tensors=tuple(attrs.evolve(t, name=t.name + "%t0") if i == 0 else t
                                        for i, t in enumerate(p.tensors)))
    assert canonical(odd) is None
