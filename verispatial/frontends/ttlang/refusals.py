"""Refusals of the TT-Lang front end: every construct it cannot read exactly is refused by name with its file:line
(``errors.SourceRefused``; the CLI prints it on one line and exits 2), never dropped or approximated.

``NAMED`` lists the TT-Lang constructs the front end knows and does not lower yet, with the reason given to the user.
"""

from __future__ import annotations

import ast
from typing import NoReturn

from verispatial.errors import SourceRefused

#: TT-Lang API names refused on sight, and why.
NAMED: dict[str, str] = {
    "ttl.GroupTransfer": "group transfers are not lowered yet",
    "ttl.signpost": "signposts are not read (a profiling region: give the operation without it)",
    "ttnn.experimental": "multi-device (mesh) operations are not lowered: one device only",
}


def refuse(file: str, node: ast.AST | None, construct: str, reason: str) -> NoReturn:
    """Raise ``SourceRefused`` at ``node``'s line (line 0 without a node)."""
    line = getattr(node, "lineno", 0) if node is not None else 0
    raise SourceRefused(file, line, construct, reason, frontend="ttlang")


def snippet(node: ast.AST, limit: int = 60) -> str:
    """The source text of ``node`` on one line, cut to ``limit`` characters (names a construct in a refusal)."""
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
