"""One folder per rule family (issue 15, item 4): each holds the family's reference semantics (``semantics.py``, the
interpreter's handlers for the family's op classes), its checker encoding (``encoding.py``) and its Promela part
(``promela.py``); its tests are ``tests/families/test_<family>.py``.

The chains that give ops their meaning — ``petri/interp.py``, ``petri/promela.py`` and ``certify/rules.py`` — each
assemble one ``{op class: handler}`` table from the families' tables and raise ``errors.UnhandledOp`` for an op class
with no entry (fail closed). The rule registry (``ir/rules.py``) names, for every rule, the modules of its folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

V = TypeVar("V")


def assemble(chain: str, *tables: Mapping[type, V]) -> dict[type, V]:
    """One dispatch table of ``chain`` from the families' tables (an op class's handler, its landing, its Promela
    queue); ``ValueError`` naming the op class when two families claim it (an op has one meaning, in one family)."""
    out: dict[type, V] = {}
    for table in tables:
        for cls, handler in table.items():
            if cls in out:
                raise ValueError(f"{chain}: two families handle op class {cls.__name__}")
            out[cls] = handler
    return out
