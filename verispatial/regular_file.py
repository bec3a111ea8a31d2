"""Input files that are regular files: what a path to be read is, when it is not one.

A named pipe blocks a read until a writer opens it and ``/dev/zero`` never ends, so every input (a program, a
certificate, a host description, a kernel source, a header, a TT-Lang file, a manifest) is asked here before it is
read. Symbolic links are followed: a link to a regular file is one.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: the kinds of non-regular file ``stat`` tells apart, in words an engineer reads
_KINDS: tuple[tuple[int, str], ...] = (
    (stat.S_IFIFO, "a FIFO (named pipe)"),
    (stat.S_IFCHR, "a character device"),
    (stat.S_IFBLK, "a block device"),
    (stat.S_IFSOCK, "a socket"),
)


def not_regular(path: str | Path, expected: str = "a file") -> str | None:
    """Why ``path`` cannot be read as ``expected`` (e.g. ``"a program.json file"``): ``"no such file"``, ``"is a
    directory, expected ..."``, ``"is a FIFO (named pipe), not a regular file: expected ..."``; ``None`` when it is
    a regular file (or a link to one). Raises nothing: a path ``stat`` cannot reach is "no such file"."""
    got = regular_stat(path, expected)
    return got if isinstance(got, str) else None


def regular_stat(path: str | Path, expected: str = "a file") -> os.stat_result | str:
    """The ``os.stat`` of ``path`` when it is a regular file (or a link to one), else why it cannot be read as
    ``expected`` (``not_regular``'s words): one ``stat`` call gives a reader both the answer and the size."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return "no such file"
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return st
    if stat.S_ISDIR(mode):
        return f"is a directory, expected {expected}"
    kind = next((word for fmt, word in _KINDS if stat.S_IFMT(mode) == fmt), "not a file")
    return f"is {kind}, not a regular file: expected {expected}"
