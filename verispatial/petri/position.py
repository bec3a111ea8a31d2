"""Where an engine is: op paths, positions and violations — the vocabulary the interpreter, the explorer and the
checker share.

An op is addressed by its **path**, a tuple of indices into nested op lists: ``(2, 0, 3)`` is
``ops[2].body[0].body[3]`` of an ``EngineProgram``. A **Position** says an engine is *about to execute* the op
at ``path`` in a given iteration of its enclosing loops (``path=None``: the engine has finished).
"""

from __future__ import annotations

from typing import Any

import attrs

from verispatial.ir.obligation import SubjectRef, subject_from_json, subject_to_json
from verispatial.ir.ops import If, Loop, Op
from verispatial.ir.rules import INTERPRETER_RULES


def path_text(path: tuple[int, ...] | None) -> str:
    """``(1, 2)`` -> ``ops[1].body[2]``; ``None`` -> ``end``."""
    if path is None:
        return "end"
    if not path:
        return "ops"
    return "ops" + "".join(f"[{i}]" if k == 0 else f".body[{i}]" for k, i in enumerate(path))


def op_at(ops: tuple[Op, ...], path: tuple[int, ...]) -> Op:
    """The op at ``path`` in the op list ``ops``; raises ``IndexError`` (or ``TypeError`` when a path goes
    into an op that is not a loop)."""
    if not path:
        raise IndexError("an empty path names no op")
    op: Op = ops[path[0]]
    for i in path[1:]:
        if not isinstance(op, (Loop, If)):
            raise TypeError(f"path enters {type(op).__name__}, which has no body")
        op = op.body[i]
    return op


def enclosing_loops(ops: tuple[Op, ...], path: tuple[int, ...]) -> tuple[Loop | If, ...]:
    """The containers (loops and ifs) around the op at ``path``, outer first (``len(path) - 1`` of them)."""
    out: list[Loop | If] = []
    for k in range(1, len(path)):
        lp = op_at(ops, path[:k])
        assert isinstance(lp, (Loop, If))
        out.append(lp)
    return tuple(out)


def iteration_text(iteration: tuple[tuple[str, int], ...]) -> str:
    """``(("k", 3), ("i", 0))`` -> ``k=3 i=0`` (an ``If``'s entry, named ``""``, is left out)."""
    return " ".join(f"{v}={i}" for v, i in iteration if v)


@attrs.frozen
class Position:
    """Engine ``engine`` (an ``EngineProgram.key`` such as ``"(0,0).reader"``) is about to execute the op at
    ``path`` with the enclosing loop indices ``iteration`` (outer first, one entry per container: an ``If`` is
    ``("", 0)``); ``path=None`` means finished.

    ``op`` is the op's human text (``reserve(b0, 64)``); it is for display only and takes no part in equality,
    so a position built without it (e.g. by the checker) equals the interpreter's.
    """

    engine: str
    path: tuple[int, ...] | None
    iteration: tuple[tuple[str, int], ...] = ()
    op: str = attrs.field(default="", eq=False, order=False)

    @property
    def finished(self) -> bool:
        return self.path is None

    def order_key(self) -> tuple[float, ...]:
        """A key that sorts the positions of one engine in execution order: ``(i0, t1, i1, t2, i2, ...)`` for
        path ``(i0, i1, ...)`` and iteration values ``(t1, t2, ...)``; finished sorts last. A loop's own path
        sorts before every op of its body."""
        if self.path is None:
            return (float("inf"),)
        out: list[float] = [self.path[0]]
        for k, i in enumerate(self.path[1:]):
            out.append(self.iteration[k][1] if k < len(self.iteration) else 0)
            out.append(i)
        return tuple(out)

    def same_place(self, other: Position) -> bool:
        """Same engine, path and iteration values (loop variable names are not compared)."""
        return (
            self.engine == other.engine
            and self.path == other.path
            and tuple(i for _, i in self.iteration) == tuple(i for _, i in other.iteration)
        )

    def __str__(self) -> str:
        if self.path is None:
            return f"{self.engine} finished"
        parts = [f"{self.engine} at {path_text(self.path)}"]
        if self.op:
            parts.append(self.op)
        if self.iteration:
            parts.append(iteration_text(self.iteration))
        return " ".join(parts)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "engine": self.engine,
            "path": None if self.path is None else list(self.path),
            "iteration": [[v, i] for v, i in self.iteration],
        }
        if self.op:
            d["op"] = self.op
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Position:
        """Inverse of ``to_json``; raises ``KeyError``/``TypeError``/``ValueError`` on a malformed object."""
        path = d["path"]
        return cls(
            engine=str(d["engine"]),
            path=None if path is None else tuple(int(i) for i in path),
            iteration=tuple((str(v), int(i)) for v, i in d.get("iteration", [])),
            op=str(d.get("op", "")),
        )


#: Every rule name the interpreter reports (the checker uses the same names): from the rule registry.
RULES = INTERPRETER_RULES


class Cause:
    """The cases of a rule that a replay must tell apart (``Violation.cause``)."""

    #: ``tensor-race`` at a state write issued after a read of the tile in a later section (that read must see the
    #: version this write makes).
    LATE_STATE_WRITE = "late-state-write"


@attrs.frozen
class Violation:
    """Rule ``rule`` (one of ``RULES``) broken at ``position``; ``message`` says what was expected and got.

    For the end-of-run rules (``balance-cb``, ``balance-sem``, ``output-unwritten``) the position is a finished engine of the site
    concerned (the buffer's consumer, else its producer, else the site's first engine).
    """

    rule: str
    position: Position
    message: str
    #: What the violation is about beyond its op — the buffer or word that ends unbalanced, the tensor whose tile
    #: races or is unwritten, the aliased pair, the rendezvous boundary — so a replay confirms a claim by these
    #: fields, never by the wording of ``message`` (``ir/obligation.py``).
    subject: SubjectRef | None = None
    #: Which case of the rule it is, where a rule has several a replay must tell apart (``Cause``); "" otherwise.
    cause: str = ""

    def __str__(self) -> str:
        return f"[{self.rule}] {self.position}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        d = {"rule": self.rule, "position": self.position.to_json(), "message": self.message}
        if self.subject is not None:
            d["subject"] = subject_to_json(self.subject)
        if self.cause:
            d["cause"] = self.cause
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Violation:
        subject = subject_from_json(d["subject"]) if "subject" in d else None
        return cls(rule=str(d["rule"]), position=Position.from_json(d["position"]), message=str(d["message"]),
                   subject=subject, cause=str(d.get("cause", "")))  # type: ignore[arg-type]
