"""The pinned vendor sources: the ttnn wheel ships every op's kernel C++ and the device headers (they are compiled
at run time), so the examples, the tests that read real kernels and the corpus benchmark read them from an unpacked
wheel. Nothing of it is kept in this repository.

Where: ``$VERISPATIAL_TTNN`` when set (an unpacked wheel), else ``<user cache>/verispatial/ttnn-<version>``, which
``wheel_root(download=True)`` fills with ``pip download`` (the wheel is built for CPython 3.12 only, so the download
names that interpreter; nothing is installed or imported from it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

#: the ttnn release the examples and the corpus figures were read from
TTNN_VERSION = "0.81.1"
ENV = "VERISPATIAL_TTNN"
#: where the kernels sit inside an unpacked wheel
KERNELS = Path("ttnn/ttnn/cpp/ttnn/operations")


def cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("verispatial")) / f"ttnn-{TTNN_VERSION}"


def wheel_root(download: bool = False) -> Path | None:
    """The unpacked wheel (its ``ttnn/`` holds ``ttnn/cpp`` and ``tt_metal/hw/inc``), or None when it is not there
    and ``download`` is False or the download fails (offline). Sets ``$VERISPATIAL_TTNN`` to it, which the shipped
    host descriptions name as their kernel root."""
    given = os.environ.get(ENV)
    root = Path(given) if given else cache_dir() / "wheel"
    if not (root / KERNELS).is_dir():
        if given or not download or not _fetch(root):
            return None
    os.environ[ENV] = str(root)
    return root


def _fetch(root: Path) -> bool:
    dl = root.parent / "download"
    dl.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", f"ttnn=={TTNN_VERSION}", "--no-deps", "--only-binary=:all:",
           "--python-version", "3.12", "--quiet", "-d", str(dl)]
    try:
        subprocess.run(cmd, check=True, capture_output=True, timeout=900)
        (wheel,) = dl.glob(f"ttnn-{TTNN_VERSION}-*.whl")
        with zipfile.ZipFile(wheel) as z:
            z.extractall(root)
    except (OSError, ValueError, subprocess.SubprocessError, zipfile.BadZipFile):
        return False
    return (root / KERNELS).is_dir()
