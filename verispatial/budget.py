"""Run limits: a wall-clock budget for one checker run (``certify --budget SECONDS``, ``DEFAULT_SECONDS`` by
default) and interrupts (Ctrl-C).

Inside ``deadline(seconds)`` every long loop of the checker and the interpreter calls ``check()`` (the interpreter
every 1024 steps, the explorer every 1024 states, the checker between obligation families and before every solver
query) and each solver query also gets the time left as its Z3 ``timeout`` (on top of its deterministic
``rlimit``). Past the deadline ``check()`` raises ``BudgetExhausted``; the checker turns every obligation it has
not decided into ``failed-to-prove`` saying so (``checker.check``), never into a verdict. A query cut short by
the timeout answers ``unknown``, which is never a pass. The deadline is an absolute ``time.monotonic()`` value, so
forked worker processes (``--jobs``) inherit it.

Interrupts: within ``sigint_guard()`` (the CLI's ``main``) SIGINT raises ``Interrupted``, which no ``except
Exception`` catches (nor click, which would print a blank line for a ``KeyboardInterrupt``), and also sets a flag
that ``check()`` reads: a SIGINT that lands while Python runs a finalizer (where an exception is dropped) or while
Z3 solves (Z3 takes the signal for itself and answers unknown, ``smt.run_check``) still stops the run at the next
check. The CLI tests the flag before it prints or writes anything, so no verdict follows an interrupt.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any, NoReturn

#: Seconds one ``certify`` run may take by default (``--budget``).
DEFAULT_SECONDS = 600.0

#: (deadline as ``time.monotonic()``, the budget in seconds), innermost last.
_DEADLINES: list[tuple[float, float]] = []


class BudgetExhausted(Exception):
    """The run's budget of ``seconds`` was spent."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(seconds)  # args = (seconds,): a worker process's exception pickles back as itself

    def __str__(self) -> str:
        return f"the run's time budget of {self.seconds:g} s was spent (certify --budget)"


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Within the block, ``check()`` raises once ``seconds`` have passed (None: no budget of its own; an enclosing
    one still holds). A nested budget never extends an enclosing one."""
    if seconds is None:
        yield
        return
    end = time.monotonic() + seconds
    if _DEADLINES:
        end = min(end, _DEADLINES[-1][0])
    _DEADLINES.append((end, seconds if not _DEADLINES or end < _DEADLINES[-1][0] else _DEADLINES[-1][1]))
    try:
        yield
    finally:
        _DEADLINES.pop()


def remaining() -> float | None:
    """Seconds left of the innermost budget (may be negative), or None when no budget is active."""
    if not _DEADLINES:
        return None
    return _DEADLINES[-1][0] - time.monotonic()


def check() -> None:
    """Raise ``Interrupted`` after a SIGINT, ``BudgetExhausted`` when the active budget is spent; else nothing."""
    if _INTERRUPTED[0]:
        raise Interrupted
    if _DEADLINES and time.monotonic() >= _DEADLINES[-1][0]:
        raise BudgetExhausted(_DEADLINES[-1][1])


def check_interrupt() -> None:
    """Raise ``Interrupted`` after a SIGINT (the CLI calls it before it prints or writes anything)."""
    if _INTERRUPTED[0]:
        raise Interrupted


def exhausted() -> bool:
    """Whether an active budget is spent."""
    return bool(_DEADLINES) and time.monotonic() >= _DEADLINES[-1][0]


class Interrupted(BaseException):
    """The run was interrupted (SIGINT): the CLI exits 130 with one line."""


_INTERRUPTED: list[bool] = [False]


def interrupted() -> bool:
    """Whether a SIGINT arrived inside ``sigint_guard`` (or ``interrupt`` was called) since the guard began."""
    return _INTERRUPTED[0]


def interrupt() -> NoReturn:
    """Note the interrupt and raise ``Interrupted``."""
    _INTERRUPTED[0] = True
    _silence_finalizers()
    raise Interrupted


def _in_finalizer(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def _on_sigint(_signum: int, frame: FrameType | None) -> None:
    _INTERRUPTED[0] = True
    _silence_finalizers()
    if not _in_finalizer(frame):  # an exception raised in a finalizer is dropped (and printed): let check() raise
        raise Interrupted


class _QuietHook:
    """``sys.unraisablehook`` that drops what finalizers raise once the process was interrupted (the process exits
    130 with one line), and passes everything else on to the hook it replaced."""

    def __init__(self, hook: Any) -> None:
        self.hook = hook
        self.quiet = False

    def __call__(self, u: Any) -> None:
        if isinstance(u.exc_value, (Interrupted, KeyboardInterrupt)):
            self.quiet = True
        if not (self.quiet or _INTERRUPTED[0]):
            self.hook(u)


def _silence_finalizers() -> None:
    hook = sys.unraisablehook
    if isinstance(hook, _QuietHook):
        hook.quiet = True


def _note_sigint(_signum: int, _frame: FrameType | None) -> None:
    _INTERRUPTED[0] = True


def defer_sigint() -> None:
    """From now on until ``sigint_guard`` takes over, a SIGINT only sets the flag (the command line's entry points
    call it before their imports: an interrupt while modules load would print the import machinery's traceback, or
    be swallowed by a library's catch-all and let the run go on). Main thread only."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _note_sigint)


@contextlib.contextmanager
def sigint_guard() -> Iterator[None]:
    """Within the block SIGINT raises ``Interrupted`` and sets the flag ``interrupted()`` reads (main thread only;
    elsewhere the block changes nothing); an interrupt noted before (``defer_sigint``) raises at once. The previous
    handler is restored after it and the flag cleared. After an interrupt, exceptions raised in finalizers are not
    printed (an object half-built when the signal landed fails in its ``__del__``)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, _on_sigint)
    hook = sys.unraisablehook
    if not isinstance(hook, _QuietHook):
        sys.unraisablehook = _QuietHook(hook)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before if before is not _note_sigint else signal.default_int_handler)
        _INTERRUPTED[0] = False
