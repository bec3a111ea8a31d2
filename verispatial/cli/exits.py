"""Exit codes and the one place errors become them: ``run`` maps every error of a command to its exit code and
its one line on stderr (and, with ``--json``, the one JSON document); ``guard`` prints a command's error as JSON
first.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

import click

from verispatial import budget
from verispatial.cli.output import write_json
from verispatial.errors import BadInput, CheckerError
from verispatial.extras import missing_extra

EXIT_OK = 0
EXIT_REFUTED = 1
EXIT_BAD_INPUT = BadInput.exit_code
EXIT_FAILED = 3
EXIT_CHECKER_ERROR = CheckerError.exit_code
EXIT_INTERRUPTED = 130  # the shell's code for SIGINT


def fail(e: BadInput, as_json: bool) -> NoReturn:
    """Raise ``e``, with ``--json`` (``as_json``) printing its JSON document first."""
    if as_json:
        write_json(e.to_json())
    raise e


def guard(as_json: bool, body: Callable[[], int]) -> int:
    """Run a command's ``body``; with ``--json`` a ``BadInput`` or ``CheckerError`` prints its JSON document
    before it propagates to ``run``."""
    try:
        return body()
    except BadInput as e:
        fail(e, as_json)
    except (CheckerError, ModuleNotFoundError) as e:
        if (bad := missing_extra(e)) is not None:  # an optional dependency not installed: name its extra
            fail(bad, as_json)
        if as_json and isinstance(e, CheckerError):
            write_json(e.to_json())
        raise


def error_line(msg: str) -> None:
    """``verispatial: error: <msg>`` on stderr: the one line of bad input."""
    sys.stderr.write(f"verispatial: error: {msg}\n")


def run(group: click.Group, argv: Sequence[str] | None = None) -> int:
    """Run the click application ``group`` on ``argv`` (default ``sys.argv[1:]``) and return the exit code; never
    raises and never prints a traceback (an interrupt is exit 130)."""
    args = list(argv) if argv is not None else sys.argv[1:]
    with budget.sigint_guard():
        try:
            budget.check_interrupt()  # one noted while the modules loaded (budget.defer_sigint)
            rv = _main(group, args)
        except (budget.Interrupted, KeyboardInterrupt, click.exceptions.Abort):
            rv = EXIT_INTERRUPTED
        if budget.interrupted() or rv == EXIT_INTERRUPTED:
            with contextlib.suppress(Exception, budget.Interrupted, KeyboardInterrupt):
                sys.stderr.write("verispatial: interrupted\n")
                sys.stderr.flush()
            return EXIT_INTERRUPTED
    return rv


def _wants_json(args: list[str]) -> bool:
    """``--json`` among the options (before a ``--``), whether or not the command parsed."""
    return "--json" in (args[: args.index("--")] if "--" in args else args)


def _usage_error(args: list[str], field: str, rule: str) -> int:
    """A command line click refused (an unknown option, a missing argument, a bad value): one line on stderr and,
    with ``--json``, the one JSON document every exit code 0-4 prints (the command never ran, so nothing else did)."""
    error_line(f"{field}: {rule}" if field else rule)
    if _wants_json(args):
        # no file: the option click names (``-o/--out``), else the command line as a whole
        write_json(BadInput("", "", rule, option=field or "command line").to_json())
    return EXIT_BAD_INPUT


def _main(group: click.Group, args: list[str]) -> int:
    try:
        rv = group.main(args=args, prog_name="verispatial", standalone_mode=False)
    except BadInput as e:
        error_line(e.line())
        return EXIT_BAD_INPUT
    except CheckerError as e:
        if (bad := missing_extra(e)) is not None:
            return _missing_extra(bad, args)
        sys.stderr.write(f"verispatial: checker error: {e}\n")
        return EXIT_CHECKER_ERROR
    except click.exceptions.NoArgsIsHelpError as e:
        sys.stdout.write(e.format_message() + "\n")
        return EXIT_BAD_INPUT
    except click.BadParameter as e:  # also a missing argument: name the option or argument, then the rule
        if e.param is not None:
            hint = "/".join(e.param.opts) if isinstance(e.param, click.Option) else (e.param.metavar or e.param.name or "")
        else:
            hint = e.param_hint if isinstance(e.param_hint, str) else ""
        rule = "missing (required)" if isinstance(e, click.MissingParameter) else e.message
        return _usage_error(args, hint, rule)
    except click.ClickException as e:
        return _usage_error(args, "", e.format_message())
    except (click.exceptions.Abort, KeyboardInterrupt, budget.Interrupted):
        return EXIT_INTERRUPTED
    except Exception as e:
        if (bad := missing_extra(e)) is not None:
            return _missing_extra(bad, args)
        # a fault of the CLI itself: still one line, still no traceback
        sys.stderr.write(f"verispatial: checker error: {type(e).__name__}: {e}\n")
        return EXIT_CHECKER_ERROR
    return rv if isinstance(rv, int) else EXIT_OK


def _missing_extra(bad: BadInput, args: list[str]) -> int:
    """An optional dependency a command that ran outside ``guard`` needed is not installed: ``bad``'s one line and,
    with ``--json``, its JSON document."""
    error_line(bad.line())
    if _wants_json(args):
        write_json(bad.to_json())
    return EXIT_BAD_INPUT
