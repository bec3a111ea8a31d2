"""The pinned vendor sources: the ttnn wheel ships every op's kernel C++ and the device headers (they are compiled
at run time), so the examples, the tests that read real kernels and the corpus benchmark read them from an unpacked
wheel. Nothing of it is kept in this repository.

Where: ``$VERISPATIAL_TTNN`` when set (an unpacked wheel), else ``<user cache>/verispatial/ttnn-<version>``, which
``wheel_root(download=True)`` fills with ``pip download`` (the wheel is built for CPython 3.12 only, so the download
names that interpreter; nothing is installed or imported from it).

Other releases (the *before* and *after* kernels of a hang fixed between two releases, ``examples/ttmetal/hangs/``)
are found the same way under their own variable, ``$VERISPATIAL_TTNN_0_72_0`` for 0.72.0 (``env_var``), and their
own cache directory; of those only the kernel tree ``ttnn/ttnn/cpp/`` (the kernels and the op helper headers they
include; about 20 MB of a 70-100 MB wheel) and the device headers under ``ttnn/tt_metal/`` (the release's own JIT
include path, which decides which of its ``#include``s GCC finds; about 12 MB) are unpacked.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

#: the ttnn release the examples and the corpus figures were read from
TTNN_VERSION = "0.81.1"
ENV = "VERISPATIAL_TTNN"
#: where the kernels sit inside an unpacked wheel
KERNELS = Path("ttnn/ttnn/cpp/ttnn/operations")
#: the part of a non-pinned wheel that is unpacked: the kernel sources and the headers they include by name
KERNEL_TREE = "ttnn/ttnn/cpp/"
#: and its device tree's headers (the JIT's include path is under it: ``cpp.JIT_INCLUDE_DIRS``), not its firmware
#: images or host files
DEVICE_TREE = "ttnn/tt_metal/"
DEVICE_HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".inl", ".ipp", ".tpp")
#: what marks an unpacked device tree
DEVICE_INC = Path("ttnn/tt_metal/hw/inc")
_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
#: ``$VERISPATIAL_TTNN`` or ``$VERISPATIAL_TTNN_<a>_<b>_<c>`` inside a host description's kernel_root
ENV_IN_TEXT = re.compile(r"VERISPATIAL_TTNN(?:_(\d+)_(\d+)_(\d+))?")


def env_var(version: str = TTNN_VERSION) -> str:
    """The environment variable naming the unpacked wheel of ``version``: ``VERISPATIAL_TTNN`` for the pinned
    release, ``VERISPATIAL_TTNN_0_72_0`` for 0.72.0."""
    if not _VERSION.match(version):
        raise ValueError(f"a ttnn release is written a.b.c, got {version!r}")
    return ENV if version == TTNN_VERSION else f"{ENV}_{version.replace('.', '_')}"


def version_of_env(text: str) -> str | None:
    """The release whose variable ``text`` names (``${VERISPATIAL_TTNN_0_72_0}/ttnn`` -> 0.72.0; the bare
    ``$VERISPATIAL_TTNN`` -> the pinned release), or None when it names neither."""
    m = ENV_IN_TEXT.search(text)
    if m is None:
        return None
    return TTNN_VERSION if m.group(1) is None else ".".join(m.groups())


def cache_dir(version: str = TTNN_VERSION) -> Path:
    import platformdirs

    env_var(version)  # checks the form
    return Path(platformdirs.user_cache_dir("verispatial")) / f"ttnn-{version}"


def wheel_root(download: bool = False, version: str = TTNN_VERSION) -> Path | None:
    """The unpacked wheel of ``version`` (its ``ttnn/`` holds ``ttnn/cpp``; the pinned one also
    ``tt_metal/hw/inc``), or None when it is not there and ``download`` is False or the download fails (offline).
    Sets ``env_var(version)`` to it, which the shipped host descriptions name as their kernel root."""
    var = env_var(version)
    given = os.environ.get(var)
    root = Path(given) if given else cache_dir(version) / "wheel"
    if not (root / KERNELS).is_dir():
        if given or not download or not _fetch(root, version):
            return None
    elif not given and not (root / DEVICE_INC).is_dir():
        _add_device_headers(root, version)
    os.environ[var] = str(root)
    return root


def _fetch(root: Path, version: str) -> bool:
    dl = root.parent / "download"
    dl.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", f"ttnn=={version}", "--no-deps", "--only-binary=:all:",
           "--python-version", "3.12", "--quiet", "-d", str(dl)]
    try:
        subprocess.run(cmd, check=True, capture_output=True, timeout=900)
        (wheel,) = dl.glob(f"ttnn-{version}-*.whl")
        unpack(wheel, root, whole=version == TTNN_VERSION)
    except (OSError, ValueError, subprocess.SubprocessError, zipfile.BadZipFile):
        return False
    return (root / KERNELS).is_dir()


def _add_device_headers(root: Path, version: str) -> None:
    """Unpack the device headers of ``version`` into a copy cached with its kernel tree only, from the wheel kept
    beside it (never downloaded again); a copy with no wheel beside it stays as it is. The headers are unpacked
    beside the copy and moved into it by one rename, so a process reading them at the same time (the test workers)
    sees all of them or none."""
    wheels = sorted((root.parent / "download").glob(f"ttnn-{version}-*.whl"))
    if not wheels:
        return
    staging = Path(tempfile.mkdtemp(prefix=".device-headers-", dir=root.parent))
    try:
        with zipfile.ZipFile(wheels[0]) as z:
            z.extractall(staging, [n for n in z.namelist() if _device_header(n)])
        # DEVICE_TREE's directory, moved whole; another process may have moved its own first
        os.rename(staging / DEVICE_TREE.rstrip("/"), root / DEVICE_TREE.rstrip("/"))
    except (OSError, zipfile.BadZipFile):
        pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _device_header(name: str) -> bool:
    return name.startswith(DEVICE_TREE) and name.endswith(DEVICE_HEADER_SUFFIXES)


def unpack(wheel: Path, root: Path, whole: bool) -> None:
    """Unpack ``wheel`` under ``root``: every member (``whole``), else those under ``KERNEL_TREE`` and the headers
    under ``DEVICE_TREE``."""
    with zipfile.ZipFile(wheel) as z:
        members = None if whole else [n for n in z.namelist() if n.startswith(KERNEL_TREE) or _device_header(n)]
        z.extractall(root, members)
