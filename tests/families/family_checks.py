"""Shared assertions of the family tests: the one violation of a run, where it is, the per-engine rules' findings
and the Promela model's assertions of a rule."""

from __future__ import annotations

import re

from verispatial.certify.rules import engine_facts
from verispatial.certify.structure import engine_views
from verispatial.ir import Program
from verispatial.petri.interp import SimResult
from verispatial.petri.position import Violation


def only(r: SimResult) -> Violation:
    assert len(r.violations) == 1, r.text()
    return r.violations[0]


def where(v: Violation) -> tuple[str, str, tuple[int, ...] | None, tuple[tuple[str, int], ...]]:
    return (v.rule, v.position.engine, v.position.path, v.position.iteration)


def findings(p: Program) -> list[tuple[str, str, tuple[int, ...] | None]]:
    """The per-engine rules' findings on every engine: (rule, engine, path), sorted."""
    return sorted((f.rule, f.engine, f.path) for v in engine_views(p).values() for f in engine_facts(p, v).findings)


def asserted(model: str, rule: str) -> list[str]:
    """The op ids (``O_<engine>_<path>``) at which the Promela model asserts ``rule``, in order."""
    return re.findall(rf"assert\(R_{rule.replace('-', '_')} \|\| (O_\d+(?:_\d+)*) \|\|", model)
