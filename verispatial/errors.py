"""One errors module: a root exception and one subclass per way verispatial refuses input, and the command line's
``BadInput`` (exit 2) and ``CheckerError`` (exit 4).

Every error keeps the offending entity so callers (the CLI, tests) can name it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs


class VerispatialError(Exception):
    """Root of every error verispatial raises on purpose."""


class ParseError(VerispatialError):
    """program.json (or a certificate) could not be read: missing file, bad JSON, wrong shape or type.

    ``field`` is a JSON path such as ``programs[3].ops[2].pages``; ``rule`` says what was expected; ``at`` is the
    same path as keys and indices (``("programs", 3, "ops", 2, "pages")``) where the schema check raised it.
    """

    def __init__(self, field: str, rule: str, at: tuple[str | int, ...] | None = None) -> None:
        self.field = field
        self.rule = rule
        self.at = at
        super().__init__(f"{field}: {rule}" if field else rule)


class IrViolation(VerispatialError):
    """A structural rule of the IR is broken. ``entity`` names the kind and id, ``rule`` the rule; for a rule an op
    breaks, ``engine`` (its program's key, ``"(x,y).reader"``) and ``path`` (its op path) say which op, so a front end
    can name the source line it read the op from."""

    def __init__(self, entity: str, rule: str, engine: str | None = None,
                 path: tuple[int, ...] | None = None) -> None:
        self.entity = entity
        self.rule = rule
        self.engine = engine
        self.path = path
        super().__init__(f"{entity}: {rule}")


class InvalidProgram(VerispatialError):
    """``validate()`` found one or more :class:`IrViolation`; all of them are kept in ``violations``."""

    def __init__(self, violations: list[IrViolation]) -> None:
        self.violations = violations
        first = violations[0] if violations else None
        more = f" (+{len(violations) - 1} more)" if len(violations) > 1 else ""
        super().__init__(f"{first}{more}")


class CertificateMismatch(VerispatialError):
    """A supplied certificate omits, adds or misstates a place or obligation the checker re-derived."""

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(what)


class PassRefused(VerispatialError):
    """A pass refused its input by name; ``pass_name`` is the pass, ``reason`` why."""

    def __init__(self, pass_name: str, reason: str) -> None:
        self.pass_name = pass_name
        self.reason = reason
        super().__init__(f"{pass_name}: {reason}")


class ComposeRefused(PassRefused):
    """``compose`` refused to join its sections; ``rule`` names the rule (``no-sections``, ``section-not-scheduled``,
    ``tensor-conflict``, ``trip-conflict``, ``phase-overflows-memory``, ``invalid-program``, ...) and ``reason``
    says, on one line, which entity broke it and how. ``section`` is the offending section's index when one is to
    blame; ``violations`` keeps every ``IrViolation`` of an invalid joined program."""

    def __init__(self, rule: str, detail: str, *, section: int | None = None,
                 violations: list[IrViolation] | None = None) -> None:
        self.rule = rule
        self.detail = detail
        self.section = section
        self.violations = violations or []
        super().__init__("compose", f"{rule}: {detail}")


class UnhandledOp(Exception):
    """A chain that gives ops their meaning (the interpreter, the checker's per-engine rules, validate, the Promela
    export) has no case for an op class: raised instead of treating the op as a no-op, so a new op cannot be silently
    ignored by the checker or the oracle (fail closed). A fault of verispatial, never of its input: the CLI reports it
    as a checker error (exit 4)."""

    def __init__(self, chain: str, op: object) -> None:
        super().__init__(f"{chain} has no case for op class {type(op).__name__}")
        self.chain = chain
        self.op = op


class SourceRefused(VerispatialError):
    """A front end met a construct of the user's source it cannot read exactly: ``construct`` names it, ``file`` and
    ``line`` say where, ``reason`` why; ``frontend`` is the front end (``ttlang``). The front end refuses the whole
    source rather than drop or approximate it."""

    def __init__(self, file: str, line: int, construct: str, reason: str, *, frontend: str) -> None:
        self.file = file
        self.line = line
        self.construct = construct
        self.reason = reason
        self.frontend = frontend
        super().__init__(f"{file}:{line}: {construct}: {reason}")


# The command line's two errors. Neither derives from VerispatialError: each is already the translated, final
# report of a fault (its file, field and rule), so a handler of VerispatialError must not catch and re-wrap it.


class BadInput(Exception):
    """Bad input found by the CLI: ``where`` is the file, ``field`` the JSON path or part, ``rule`` what was expected;
    ``violations`` holds every structural violation, as (entity, rule), when there were several. ``option`` names the
    command-line option at fault: alone (``where`` empty) for an option's own value (``--trip t=99``, the value in
    ``field``), or the option that gave file ``where`` (``--certificate empty.json``). The CLI prints ``line()`` and
    exits 2."""

    exit_code = 2

    def __init__(self, where: str, field: str, rule: str, violations: Sequence[tuple[str, str]] = (),
                 option: str = "") -> None:
        self.where = where
        self.field = field
        self.rule = rule
        self.violations = list(violations)
        self.option = option
        super().__init__(self.line())

    def line(self) -> str:
        """The one-line message (without the ``verispatial: error:`` prefix), each part cut to 400 characters;
        several structural violations show the first and how many more."""
        from verispatial.ir.limits import QUOTE_MAX, clip  # here: verispatial.ir imports this module

        what = " ".join(p for p in (self.option, self.where) if p)
        parts = [clip(p, 2 * QUOTE_MAX) for p in (what, self.field, self.rule) if p]
        more = f" (+{len(self.violations) - 1} more)" if len(self.violations) > 1 else ""
        return ": ".join(parts) + more

    def to_json(self) -> dict[str, Any]:
        """The JSON document ``--json`` prints for it: ``{"exit_code": 2, "error": {file, option, field, rule,
        violations}}`` (``file`` empty for an error of an option's own value, ``option`` empty for a file given as an
        argument)."""
        return {
            "exit_code": self.exit_code,
            "error": {
                "file": self.where,
                "option": self.option,
                "field": self.field,
                "rule": self.rule,
                "violations": [{"entity": e, "rule": r} for e, r in self.violations],
            },
        }


@attrs.frozen
class SourcePlace:
    """A line of the user's source: ``file`` as it can be opened from the current directory (or absolute),
    ``line`` 1-based (0: the front end knows no line), ``text`` the statement on one line (may be empty)."""

    file: str
    line: int
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "text": self.text}


class SourceRefusal(BadInput):
    """A front end refused a construct of the user's source (exit 2), as the command line reports it: ``frontend``
    (``ttmetal``, ``ttlang``), ``construct`` the construct refused, ``detail`` what about it (may be empty), ``at``
    where in the user's source, ``reason`` the refusal's rule, ``called_at`` (a construct in a helper the kernel
    includes) the kernel's call that got there, each file as the user can open it. ``kind``
    (``<frontend>-refused``) names the refusal kind: ``--sarif``'s rule id. ``to_json`` gives each its own slot."""

    def __init__(self, frontend: str, construct: str, at: SourcePlace, reason: str, *, detail: str = "",
                 called_at: SourcePlace | None = None) -> None:
        self.frontend = frontend
        self.construct = construct
        self.detail = detail
        self.at = at
        self.reason = reason
        self.called_at = called_at
        what = f"{construct} ({detail})" if detail else construct
        text = f": {at.text}" if at.text else ""
        via = ""
        if called_at is not None:
            call_text = f": {called_at.text}" if called_at.text else ""
            via = f" (called at {called_at.file}:{called_at.line}{call_text})"
        super().__init__(f"{at.file}:{at.line}", what, f"{reason}{text}{via}")

    @property
    def kind(self) -> str:
        """The refusal kind: ``ttmetal-refused``, ``ttlang-refused``."""
        return f"{self.frontend}-refused"

    def to_json(self) -> dict[str, Any]:
        """``{"exit_code": 2, "error": {...}}`` in ``BadInput``'s shape (``file``, ``field``, ``rule``,
        ``violations``) with each slot what its name says: ``file`` and ``line`` the user's source, ``field`` empty (a
        source has no JSON field), ``rule`` the refusal's rule; besides, ``kind``, ``construct``, ``detail``,
        ``text`` (the statement), ``called_at`` (``{file, line, text}`` or null) and ``message`` (the one line)."""
        return {
            "exit_code": self.exit_code,
            "error": {
                "kind": self.kind,
                "file": self.at.file,
                "line": self.at.line,
                "field": "",
                "construct": self.construct,
                "detail": self.detail,
                "rule": self.reason,
                "text": self.at.text,
                "called_at": self.called_at.to_json() if self.called_at is not None else None,
                "message": self.line(),
                "violations": [],
            },
        }


class CheckerError(Exception):
    """The checker (or simulator, or a report writer) itself failed, not its input: the CLI prints
    ``verispatial: checker error: <message>`` and exits 4."""

    exit_code = 4

    def to_json(self) -> dict[str, Any]:
        """The JSON document ``--json`` prints for it (the message cut to 1000 characters)."""
        from verispatial.ir.limits import clip

        return {"exit_code": self.exit_code, "error": {"rule": "checker error", "message": clip(str(self), 1000)}}
