"""What every pass shares: the entry-point protocol, the phase check and refusal by name (DESIGN §3, §6).

A pass is a small frozen attrs object with a kebab-case ``name``, its options as fields, and one entry point
``run(section, target) -> (section, certificate_fragment)``: valid in, valid out. A pass given a section in the
wrong phase refuses by name (``PassRefused``); so does a pass that cannot do its work — it never drops any.
"""

from __future__ import annotations

from typing import Any, NoReturn, Protocol

from verispatial.errors import PassRefused
from verispatial.ir.section import Phase, Section
from verispatial.ir.target import Target

#: A pass's contribution to the section's certificate: what that pass is responsible for.
Fragment = dict[str, Any]


class Pass(Protocol):
    """The pass protocol (see the module docstring)."""

    @property
    def name(self) -> str: ...

    def run(self, section: Section, target: Target) -> tuple[Section, Fragment]: ...


def refuse(pass_name: str, section: Section, why: str) -> NoReturn:
    """Raise ``PassRefused(pass_name, "op '<op>' (<kind>): <why>")``."""
    raise PassRefused(pass_name, f"op {section.op.name!r} ({section.op.kind}): {why}")


def expect_phase(pass_name: str, section: Section, phase: Phase) -> None:
    """Refuse unless ``section`` is in ``phase``."""
    if section.phase != phase:
        refuse(pass_name, section, f"expects a section in phase {phase.value!r}, got {section.phase.value!r}")
