"""Format 1 programs to the current format (``verispatial upgrade IN -o OUT``).

Format 1 (``"version": 1``, until the IR v2 change) had no field for what version 2 states explicitly; the upgrade
fills each with what format 1 meant, so the upgraded program says no more and no less than the original:

- ``mcast_send`` and ``mcast_set_valid`` get ``num_dests``: the number of destinations of their group (format 1
  wrote every destination of the rectangle; version 2 states the vendor API's count, reference §1.2);
  ``mcast_send`` gets ``front: false`` (format 1 multicast from the write pointer only), ``mcast_set_valid``
  ``src: null`` (the word itself);
- ``acquire_acc`` gets ``dtype: "bf16"``: format 1 checked every acquire against the 16-bit capacity
  (``Target.acc_tiles``), which is what a 16-bit dtype asks of version 2;
- ``sem_wait`` gets ``terms: []`` (a constant threshold, the only kind format 1 had), a semaphore ``section: null``
  (used by the whole program, as every format 1 semaphore was);
- ``compute`` gets ``ins: []``: format 1 did not name the pages a compute step unpacks, so there is nothing to
  carry over. Such a step reads no circular buffer as far as the checker knows, so ``cb-read-unwaited`` says
  nothing about it: ``upgrade`` says how many steps these are, and naming their operand pages lets the checker
  check their reads.

The input is checked against the format 1 schema (``program.v1.schema.json``, the schema of that format as it was
shipped) and the output against everything the current format requires, structural validation included.
"""

from __future__ import annotations

import copy
import functools
import json
from importlib import resources
from typing import Any

import attrs

from verispatial.errors import InvalidProgram, ParseError
from verispatial.ir.core import Site
from verispatial.ir.program import FORMAT, VERSION, Group, Program
from verispatial.ir.serialize import check_schema, json_kind, program_from_dict
from verispatial.ir.validate import validate

#: The format version ``upgrade_document`` reads.
FROM_VERSION = 1


@functools.cache
def _v1_schema() -> dict[str, Any]:
    return json.loads(resources.files("verispatial.ir").joinpath("program.v1.schema.json").read_text())  # type: ignore[no-any-return]


@attrs.frozen
class Upgraded:
    """The upgraded ``program`` and ``computes``: how many compute steps got no operand pages (``ins: []``)."""

    program: Program
    computes: int


def upgrade_document(doc: Any) -> Upgraded:
    """The current-format program of the format 1 document ``doc`` (module docstring). Raises ``ParseError`` naming
    the field and the rule when ``doc`` is not a format 1 program (``version`` 2 included: it needs no upgrade) or
    when the upgraded program is not valid (``InvalidProgram`` for a structural violation)."""
    if not isinstance(doc, dict):
        raise ParseError("(document)", f"expected a JSON object, got {json_kind(doc)}")
    if doc.get("format") != FORMAT:
        raise ParseError("format", f"expected {FORMAT!r}, got {doc.get('format')!r}")
    if doc.get("version") != FROM_VERSION:
        already = " (it needs no upgrade)" if doc.get("version") == VERSION else ""
        raise ParseError("version", f"upgrade reads version {FROM_VERSION}, got {doc.get('version')!r}{already}")
    check_schema(doc, _v1_schema())
    d = copy.deepcopy(doc)
    d["version"] = VERSION
    dests = [len(Group(g["id"], Site(*g["sender"]), tuple(g["rect"]), g.get("loopback", False)).destinations())
             for g in d.get("groups", [])]
    for s in d.get("semaphores", []):
        s.setdefault("section", None)
    computes = 0
    for ep in d.get("programs", []):
        computes += _upgrade_ops(ep["ops"], dests)
    program = program_from_dict(d)
    violations = validate(program)
    if violations:
        raise InvalidProgram(violations)
    return Upgraded(program, computes)


def _upgrade_ops(ops: list[dict[str, Any]], dests: list[int]) -> int:
    """Fill the version 2 fields of ``ops`` in place (loop bodies included); the number of compute steps."""
    computes = 0
    for op in ops:
        kind = op["op"]
        if kind in ("mcast_send", "mcast_set_valid"):
            # An out-of-range group is left for structural validation to name; its count is then moot.
            op["num_dests"] = dests[op["group"]] if 0 <= op["group"] < len(dests) else 0
            if kind == "mcast_send":
                op.setdefault("front", False)
            else:
                op.setdefault("src", None)
        elif kind == "acquire_acc":
            op["dtype"] = "bf16"
        elif kind == "compute":
            op["ins"] = []
            computes += 1
        elif kind == "sem_wait":
            op.setdefault("terms", [])
        elif kind == "loop":
            computes += _upgrade_ops(op.get("body", []), dests)
    return computes
