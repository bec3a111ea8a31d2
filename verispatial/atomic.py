"""Files written whole or not at all: a temporary file in the destination's directory, then a rename
(``os.replace`` is atomic), so a reader sees the old file, the new one or none; a directory of such files
(``write_dir``) is swapped in whole the same way. Every file the command line writes goes through here.

Why ``file_mode``: ``tempfile.mkstemp`` creates its file 0600 whatever the umask, and the rename keeps that mode,
so every such file was readable by its writer alone: a proof cache shared by a team (``--cache-dir`` on a group
directory, umask 002) never hit for anyone else, and a report a CI job uploads could not be read by the next
step. A file written here gets the mode a plain ``open(path, "w")`` would give it, ``0o666 & ~umask``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path


def current_umask() -> int:
    """The process's umask. Read from ``/proc/self/status`` where there is one: setting the umask to read it back
    (the portable way, used elsewhere) would change it for every thread for that moment."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode of a new regular file under the current umask (``0o666 & ~umask``)."""
    return 0o666 & ~current_umask()


def _own_descriptor(p: Path) -> int | None:
    """The descriptor number when ``p`` names one of this process's open descriptors (``/dev/stdout``,
    ``/dev/stderr``, ``/dev/fd/N``, ``/proc/self/fd/N``), else None."""
    text = str(p)
    with contextlib.suppress(OSError):
        for _ in range(40):  # the kernel's own bound on links followed (MAXSYMLINKS): a cycle of links ends here
            if not p.is_symlink() or text.startswith(("/proc/self/fd/", f"/proc/{os.getpid()}/fd/")):
                break
            p = Path(os.path.join(p.parent, os.readlink(p)))
            text = str(p)
    for head in ("/proc/self/fd/", f"/proc/{os.getpid()}/fd/", "/dev/fd/"):
        if text.startswith(head) and text[len(head):].isdigit():
            return int(text[len(head):])
    return None


def write_text(path: str | Path, text: str, *, prefix: str | None = None) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically with the mode ``file_mode`` gives. The temporary file is
    ``.<prefix or name>.*.tmp`` beside ``path`` and is removed when anything fails; raises ``OSError`` (the
    destination is then untouched)."""
    p = Path(path)
    own = _own_descriptor(p)
    if own is not None:
        # /dev/stdout, /dev/fd/1: written through the process's own descriptor, after what stdout holds already, so a
        # report on stdout redirected to a file follows the output instead of overwriting it from offset 0.
        sys.stdout.flush()
        sys.stderr.flush()
        data = text.encode("utf-8")
        while data:
            data = data[os.write(own, data):]
        return
    if p.exists() and not p.is_file() and not p.is_dir():
        # A FIFO, a device or another descriptor's link (``/dev/null``): a stream to write into. A rename would replace
        # the node itself (as root, ``/dev/full`` became a regular file) and its reader would get nothing.
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
        return
    if p.is_symlink():
        if os.path.realpath(p.parent).startswith("/proc/") or os.readlink(p).startswith("/proc/"):
            # Another process's descriptor's link: the file is open there; write into it.
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)
            return
        # The link's target is the file meant (it may not exist yet); renaming over the link would replace the link
        # and leave its target stale. A cycle of links raises (ELOOP), as an open would.
        try:
            p = Path(os.path.realpath(p, strict=True))
        except FileNotFoundError:
            p = Path(os.path.realpath(p))
    parent = p.parent if str(p.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{prefix or p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, file_mode())
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_dir(path: str | Path, files: Mapping[str, str]) -> None:
    """Replace the directory ``path`` (created if absent) by one holding exactly ``files`` (name -> UTF-8 text):
    the new directory is written beside it and swapped in by two renames, so a reader sees the old directory or the
    new one, never a mixture, and files the new one lacks do not linger. The directory gets the mode ``mkdir``
    would give it (``0o777 & ~umask``). Raises ``OSError`` (``path`` is then untouched); the parent must exist. A
    link to a directory keeps pointing there: its target is replaced, not the link."""
    p = Path(path)
    if p.is_symlink():
        p = Path(os.path.realpath(p))
    parent = p.parent if str(p.parent) else Path(".")
    tmp = Path(tempfile.mkdtemp(prefix=f".{p.name}.", dir=parent))
    try:
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")  # a plain create: the umask's mode
        os.chmod(tmp, 0o777 & ~current_umask())
        old = None
        if p.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{p.name}.old.", dir=parent))
            os.replace(p, old / p.name)
        os.replace(tmp, p)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
