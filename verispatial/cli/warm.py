"""A warm ``certify``, answered before the command line is built: ``verispatial certify PROGRAM.json`` whose bytes
the proof store's file index knows as proved prints its report from the store's ``summary`` entry, importing no
click, rich, attrs, IR or solver module (they were 0.2 s of a 0.55 s warm run of the 16-layer decode step, reading
its 17.7 MB stored report 0.24 s more).

What it answers is what the full command would print, byte for byte (``tests/test_warm_cli.py``): the key is the
one ``certify_file`` looks up (``store.file_key``: the program file's bytes, no certificate, the default resource
limit, the checker's version — every ``.py`` and ``.json`` of the package, this module and the loader included —
and the solver's), the ``summary`` entry is written only for a report whose every obligation proved and is checked
to be one when read (``store.get_summary``), and the lines come from the functions ``report_lines`` prints them
with (``report/summary.py``). Anything else runs the full command, which looks the same file index up and finds
the same entry or certifies: another option than ``-q``, ``--cache-dir DIR`` and ``--jobs N`` (``--json``,
``--sarif``, ``--junit``, ``--certificate``, ``--budget``, ...), not one ``.json`` file, a terminal on stdout (rich
colours it) or on stderr without ``-q`` (a progress bar), a program or target name rich would print otherwise than
as given (outside printable ASCII), a miss, an entry that does not check, any error at all.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Sequence

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


def _printable(text: str) -> bool:
    """Printed by rich exactly as given: printable ASCII only (rich drops some control characters and expands tabs)."""
    return all(" " <= c <= "~" for c in text)


def answer(argv: Sequence[str] | None = None) -> int | None:
    """The exit code of a warm ``certify`` printed from the proof store (module docstring), or None: nothing was
    printed, run the full command."""
    args = list(sys.argv[1:] if argv is None else argv)
    opts = _options(args)
    if opts is None:
        return None
    program, quiet, cache_dir = opts
    if sys.stdout.isatty() or (not quiet and sys.stderr.isatty()) or "FORCE_COLOR" in os.environ \
            or "TTY_COMPATIBLE" in os.environ:
        return None
    import builtins

    if hasattr(builtins, "get_ipython"):  # rich prints into a notebook's display there
        return None
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
    if not all(_printable(t) for t in (summary.program, summary.target, *(r.family for r in summary.families))):
        return None
    from verispatial.report.summary import summary_lines

    elapsed = time.perf_counter() - t0
    text = "".join(line + "\n" for line, _style in summary_lines(summary._replace(seconds=elapsed)))
    from verispatial import budget

    if budget.interrupted():  # a SIGINT noted (``budget.defer_sigint``): the full command exits 130, printing nothing
        return None
    if not quiet:
        sys.stderr.write(f"certify {program}: every obligation from the proof cache ({elapsed:.1f} s)\n")
        sys.stderr.flush()
    sys.stdout.write(text)
    return 0
