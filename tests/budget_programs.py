"""Programs that stress the run budget (issue 19, goal 5): deep constant loop nests, loops of 2**31 iterations
without a blocking op, loops of many reads and long straight-line programs. ``tests/test_budget_inputs.py`` runs
each under ``--budget``; ``benchmarks/bench_budget.py`` times them beside ``validate`` and ``json.loads``."""

from __future__ import annotations

import json
from typing import Any

Doc = dict[str, Any]


def _doc(name: str, reader: list[Doc], compute: list[Doc], *, tiles: int = 4, trips: list[Doc] | None = None) -> Doc:
    """A program on site (0,0): a reader and a compute engine around one 2-page circular buffer of tensor ``x``
    (``tiles`` tiles of 32x32 bf16)."""
    return {
        "format": "verispatial.program", "version": 2, "name": name, "target": "wormhole_b0",
        "tensors": [{"name": "x", "shape": [32, 32 * tiles], "dtype": "bf16", "role": "input", "init": None}],
        "buffers": [{"id": 0, "name": "c_0", "site": [0, 0], "cb": 0, "page_tiles": 1, "capacity": 2,
                     "dtype": "bf16", "space": "local", "alias_of": None, "section": 0}],
        "semaphores": [], "groups": [], "trips": trips or [],
        "programs": [{"site": [0, 0], "engine": "reader", "ops": reader, "section_starts": []},
                     {"site": [0, 0], "engine": "compute", "ops": compute, "section_starts": []}],
        "sections": [{"name": "main", "barrier_after": False}],
        "memory": [{"buf": 0, "offset": 103712, "size": 4096}],
    }


def _loop(var: str, count: int | str, body: list[Doc]) -> Doc:
    return {"op": "loop", "var": var, "count": count, "body": body}


def _read(terms: list[tuple[str, int]] | None = None, base: int = 0) -> Doc:
    return {"op": "read_tiles", "tensor": "x",
            "addr": {"base": base, "terms": [{"var": v, "coef": c} for v, c in terms or []], "dynamic": None},
            "tiles": 1, "into": 0}


RESERVE = {"op": "reserve", "buf": 0, "pages": 1}
PUSH = {"op": "push", "buf": 0, "pages": 1}
WAIT = {"op": "wait", "buf": 0, "pages": 1}
POP = {"op": "pop", "buf": 0, "pages": 1}
BARRIER = {"op": "read_barrier"}


def nested(depth: int = 32) -> Doc:
    """``depth`` nested two-iteration loops around one page moved reader -> compute (2**depth pages in all)."""
    reader = [RESERVE, _read(), BARRIER, PUSH]
    compute = [WAIT, POP]
    for d in reversed(range(depth)):
        reader = [_loop(f"i{d}", 2, reader)]
        compute = [_loop(f"j{d}", 2, compute)]
    return _doc(f"nested{depth}", reader, compute)


def reads(count: int = 2**31) -> Doc:
    """One page filled by ``count`` reads of the same tile (a loop with no blocking op), then moved to compute."""
    reader = [RESERVE, _loop("i", count, [_read(), BARRIER]), PUSH]
    return _doc(f"reads{count}", reader, [WAIT, POP])


def computes(count: int = 2**31) -> Doc:
    """One page read, then unpacked by ``count`` compute steps (acquire, compute, release: no blocking op), then
    popped: a correct program whose loop of ``count`` iterations no check may walk."""
    body = [{"op": "acquire_acc", "tiles": 1, "dtype": "bf16"},
            {"op": "compute", "kind": "copy", "tiles": 1, "ins": [{"buf": 0, "pages": 1}]},
            {"op": "release_acc"}]
    return _doc(f"computes{count}", [RESERVE, _read(), BARRIER, PUSH], [WAIT, _loop("i", count, body), POP])


def straight(ops: int = 100_000, *, hang: bool = False) -> Doc:
    """About ``ops`` ops without a loop: page after page moved reader -> compute, each read from the next of four
    tiles (two thirds of the ops on the reader: reserve, read, barrier, push; one third on compute: wait, pop).
    ``hang``: compute waits for one page more at its end (a deadlock after the whole run)."""
    pages = max(1, ops // 6)
    reader: list[Doc] = []
    compute: list[Doc] = []
    for k in range(pages):
        reader += [RESERVE, _read(base=k % 4), BARRIER, PUSH]
        compute += [WAIT, POP]
    if hang:
        compute.append(WAIT)
    return _doc(f"straight{6 * pages}" + ("_hang" if hang else ""), reader, compute)


def misspelt(doc: Doc) -> Doc:
    """``doc`` with its last reader op misspelt (``reserv``): bad input a report must name."""
    d = json.loads(json.dumps(doc))
    ops = d["programs"][0]["ops"]
    while ops[-1]["op"] == "loop":
        ops = ops[-1]["body"]
    ops[-1] = {**ops[-1], "op": "reserv"}
    return d


def count_ops(ops: list[Doc]) -> int:
    """Ops of a JSON op list, loop bodies included."""
    return sum(1 + count_ops(o.get("body", [])) for o in ops)
