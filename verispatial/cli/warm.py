"""A warm ``certify``, answered before the command line is built: ``verispatial certify PROGRAM.json`` whose bytes
the proof store's file index knows as proved prints its report from the store's ``summary`` entry, importing no
click, attrs, IR or solver module, nor rich unless stdout is a terminal (they were 0.2 s of a 0.55 s warm run of the
16-layer decode step, reading its 17.7 MB stored report 0.24 s more).

What it answers is what the full command would print, byte for byte but the run's seconds (``tests/test_warm_cli.py``):
the key is the one ``certify_file`` looks up (``store.file_key``: the program file's bytes, no certificate, the
default resource limit, the checker's version — every ``.py`` and ``.json`` of the package, this module and the
loader included — and the solver's); the ``summary`` entry is written only for a report whose every obligation
proved and is checked to be one when read (``store.get_summary``); the lines come from the functions
``report_lines`` prints them with (``report/summary.py``), the progress from the one the full command reports with,
and stdout goes through ``cli.output.emit`` unless rich would print the lines as they are. Anything else runs the
full command, which looks the same file index up and finds the same entry or certifies: another option than
``-q``, ``--cache-dir DIR`` and ``--jobs N`` (``--json``, ``--sarif``, ``--junit``, ``--certificate``, ``--budget``,
...), not one ``.json`` file, a miss, an entry that does not check, a noted interrupt, any error at all.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Sequence

from verispatial.cli.plain import plain_stdout

#: Larger program files take the full command (which refuses those past ``ir.limits.DOCUMENT_MAX_BYTES``): hashing
#: them is no longer the small part of a run this path saves.
FAST_MAX_BYTES = 64 * 2**20


def _options(args: Sequence[str]) -> tuple[str, bool, str | None] | None:
    """``(PROGRAM.json, quiet, cache_dir)`` of a ``certify`` command line this module answers, else None."""
    if len(args) < 2 or args[0] != "certify":
        return None
    program: str | None = None
    quiet = False
    cache_dir: str | None = None
    seen: set[str] = set()
    it = iter(args[1:])
    for a in it:
        name, eq, value = a.partition("=")
        if a in ("-q", "--quiet"):
            quiet = True
            continue
        if name in ("--cache-dir", "--jobs"):
            if name in seen:
                return None
            seen.add(name)
            if not eq:
                value = next(it, "")
            if name == "--cache-dir":
                if not value or value.startswith("-"):
                    return None
                cache_dir = value
            elif not (value.isascii() and value.isdigit() and value[0] != "0"):
                return None  # click's IntRange(min=1) words every other value
            continue
        if a.startswith("-") or program is not None or not a.endswith(".json"):
            return None
        program = a
    if program is None:
        return None
    return program, quiet, cache_dir


def answer(argv: Sequence[str] | None = None) -> int | None:
    """The exit code of a warm ``certify`` printed from the proof store (module docstring), or None: nothing was
    printed, run the full command."""
    args = list(sys.argv[1:] if argv is None else argv)
    opts = _options(args)
    if opts is None:
        return None
    program, quiet, cache_dir = opts
    t0 = time.perf_counter()
    try:
        st = os.stat(program)
        if not stat.S_ISREG(st.st_mode) or st.st_size == 0 or st.st_size > FAST_MAX_BYTES:
            return None
        with open(program, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if cache_dir is not None and not os.path.isdir(cache_dir):
        return None
    from verispatial.certify.rlimits import DEFAULT_RLIMIT
    from verispatial.driver.store import ProofStore, file_key, get_summary

    store = ProofStore(cache_dir) if cache_dir is not None else ProofStore.default()
    got = store.get("file", file_key(store, data, None, DEFAULT_RLIMIT))
    pkey = got.get("program") if isinstance(got, dict) else None
    summary = get_summary(store, pkey) if isinstance(pkey, str) else None
    if summary is None:
        return None
    from verispatial import budget
    from verispatial.report.progress import progress
    from verispatial.report.summary import summary_lines

    if budget.interrupted():  # a SIGINT noted (``budget.defer_sigint``): the full command exits 130, printing nothing
        return None
    # The progress and the lines as the full command writes them (``cli.certify._certify_one``, ``cli.output.emit``):
    # a bar or a plain line on stderr, then rich's rendering of the lines on stdout — written directly when rich
    # would print them as they are (``cli.plain.plain_stdout``; printable ASCII, as rich drops some control characters and expands
    # tabs), which spares its import.
    try:
        with progress(f"certify {program}", quiet=quiet) as say:
            say("every obligation from the proof cache")
        lines = summary_lines(summary._replace(seconds=time.perf_counter() - t0))
        if plain_stdout() and all(" " <= c <= "~" for line, _style in lines for c in line):
            sys.stdout.write("".join(line + "\n" for line, _style in lines))
        else:
            from verispatial.cli.output import emit

            emit(lines)
    # Once something is written the full command must not run too: a fault is worded as ``cli.exits.run`` words it.
    except budget.Interrupted:
        sys.stderr.write("verispatial: interrupted\n")
        return 130
    except Exception as e:
        sys.stderr.write(f"verispatial: checker error: {type(e).__name__}: {e}\n")
        return 4
    return 0
