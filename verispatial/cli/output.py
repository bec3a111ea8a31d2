"""What the commands write: files (checked before any work, then written whole or not at all), stdout and the
progress on stderr; nothing is printed or written after an interrupt."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verispatial import budget
from verispatial.errors import BadInput

if TYPE_CHECKING:
    from rich.console import Console


def _parent_exists(path: str) -> None:
    """The one rule of every output (a file or, for a directory option, the directory): it is created, the directory
    it goes into is not — ``BadInput`` when that directory does not exist, so a mistyped path writes nothing instead
    of making directories nobody asked for."""
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise BadInput(path, "", f"cannot write: directory {str(parent)!r} does not exist")


def check_output_path(path: str) -> None:
    """``BadInput`` unless ``path`` can be created: its directory exists and it is not itself a directory.

    Checked before any work so that bad input writes nothing.
    """
    if Path(path).is_dir():
        raise BadInput(path, "", "is a directory, expected an output file path")
    if Path(path).is_symlink():  # a link's target is written (atomic.write_text): a cycle of links is refused now
        try:
            os.path.realpath(path, strict=True)
        except FileNotFoundError:
            pass
        except OSError as e:
            raise BadInput(path, "", f"cannot write: {e.strerror or e}") from None
    _parent_exists(path)


def _same_file(a: str, b: str) -> bool:
    """``a`` and ``b`` name one file: the same path once links are resolved, or (both existing) the same inode."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_outputs_apart(outputs: Sequence[tuple[str, str | None]], inputs: Sequence[str | None]) -> None:
    """``BadInput`` when an output ``(option, path)`` names one of the run's ``inputs`` (the rename at the end would
    replace it: ``certify p.json --write-certificate p.json`` replaced the program by its certificate) or the file of
    an earlier output (one would replace the other). Streams (``/dev/null``, ``/dev/stdout``, FIFOs) are written
    into, not replaced: they may be named twice. Checked before any work."""
    seen: list[tuple[str, str]] = []
    for option, out in outputs:
        if out is None:
            continue
        if any(i is not None and Path(i).is_file() and _same_file(out, i) for i in inputs):
            raise BadInput(out, option, "is an input of this run, an output would replace it")
        if Path(out).exists() and not Path(out).is_file():
            continue
        for other_option, other in seen:
            if _same_file(out, other):
                raise BadInput(out, option, f"is also the {other_option} output, one would replace the other")
        seen.append((option, out))


def check_output_dir(path: str, what: str) -> None:
    """``BadInput`` unless the output directory ``path`` (holding ``what``) can be used or made: not a file, and its
    parent exists (``_parent_exists``; the directory itself is created when it is missing). Checked before any work."""
    if Path(path).exists() and not Path(path).is_dir():
        raise BadInput(path, "", f"exists and is not a directory, expected a directory for {what}")
    _parent_exists(path)


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and a rename, so the file is
    either absent or complete. ``BadInput`` if it cannot be written."""
    budget.check_interrupt()
    from verispatial import atomic

    try:
        atomic.write_text(path, text)  # the mode a plain write would give: a report is for others too (CI)
    except OSError as e:
        raise BadInput(path, "", f"cannot write: {e.strerror or e}") from None


def console() -> Console:
    """A rich console on the current stdout, without markup, highlighting or wrapping."""
    # Resolved per call so that test capture (and redirected stdout) is honoured; soft_wrap keeps a long
    # counterexample on one line instead of folding it at the console width; no markup: messages contain [].
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True, markup=False, emoji=False)


def emit(lines: list[tuple[str, str]]) -> None:
    """Print ``(text, rich style)`` lines on stdout, never after an interrupt. When rich would print them as they are
    (``cli.plain.plain_stdout``: stdout no terminal; printable ASCII, as rich drops some control characters and expands
    tabs) they are written directly, as the warm path writes them, and rich is not imported (about 50 ms of a cold
    ``certify -q``'s start)."""
    budget.check_interrupt()
    from verispatial.cli.plain import plain_stdout

    if plain_stdout() and all(" " <= c <= "~" for text, _style in lines for c in text):
        sys.stdout.write("".join(text + "\n" for text, _style in lines))
        return
    from rich.text import Text

    con = console()
    for text, style in lines:
        con.print(Text(text, style=style))


def write_json(obj: Any) -> None:
    """``obj`` as one indented JSON document on stdout, never after an interrupt."""
    budget.check_interrupt()
    sys.stdout.write(json.dumps(obj, indent=1) + "\n")


def write(text: str) -> None:
    """Plain output on stdout, never after an interrupt."""
    budget.check_interrupt()
    sys.stdout.write(text)


def stderr_progress(label: str, quiet: bool, total: int | None = None) -> Any:
    """Progress on stderr (``verispatial.report.progress``): plain lines when stderr is not a terminal, a bar on one."""
    from verispatial.report.progress import progress

    return progress(label, total, quiet=quiet)


def check_smt2_dir(smt2_dir: str) -> None:
    """``BadInput`` unless ``--smt2 DIR`` can be made or used (``check_output_dir``)."""
    check_output_dir(smt2_dir, "the SMT-LIB2 queries")


def check_program_out(out: str, inputs: Sequence[str] = ()) -> None:
    """``BadInput`` unless a program and its certificate (``passes.compile.certificate_path``) can be written to
    ``out`` and beside it: neither is a directory nor one of the run's ``inputs``, and ``out``'s directory exists.
    Checked before any work."""
    from verispatial.passes.compile import certificate_path

    for path, what in ((Path(out), "the program"), (certificate_path(out), "its certificate")):
        if path.is_dir():
            raise BadInput(str(path), "", f"is a directory, expected a file path for {what}")
    _parent_exists(out)
    check_outputs_apart((("-o", out), ("-o (its certificate)", str(certificate_path(out)))), inputs)
