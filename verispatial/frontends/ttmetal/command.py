"""The command-line side of the front end: ``verispatial import ttmetal HOST.yaml -o PROGRAM.json`` and the
program ``verispatial certify HOST.yaml`` certifies. Every failure is a ``BadInput`` (exit 2): a bad host file names
its field, a refusal names the construct and its file:line."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: host descriptions are told from program.json by their suffix
HOST_SUFFIXES = (".yaml", ".yml")


def program_of(host_path: str) -> Any:
    """The program of the host description ``host_path``; ``BadInput`` for whatever stops it."""
    from verispatial.cli import BadInput, bad_input_of
    from verispatial.errors import VerispatialError
    from verispatial.frontends.ttmetal import Refused, import_host

    try:
        return import_host(host_path)
    except Refused as e:
        what = f"{e.construct} ({e.detail})" if e.detail else e.construct
        raise BadInput(f"{e.loc.file}:{e.loc.line}", what,
                       f"{e.rule}{': ' + e.loc.text if e.loc.text else ''}") from None
    except VerispatialError as e:
        raise bad_input_of(host_path, e) from None
    except OSError as e:
        raise BadInput(host_path, "", f"cannot read: {e.strerror or e}") from None
    except RecursionError:
        raise BadInput(host_path, "", "a kernel nested too deeply to read") from None


def run_import(host_path: str, out: str) -> int:
    """``verispatial import ttmetal``: write the program of ``host_path`` to ``out`` (whole or not at all)."""
    from verispatial.cli import check_output_path, write_atomic
    from verispatial.ir.serialize import dumps

    check_output_path(out)
    program = program_of(host_path)
    write_atomic(out, dumps(program))
    return 0


@contextlib.contextmanager
def certified_path(path: str) -> Iterator[str]:
    """The program.json ``certify`` reads for ``path``: ``path`` itself, or for a host description the program it
    imports to, written to a temporary file (so the proof cache keys on the program read, kernels included)."""
    if Path(path).suffix not in HOST_SUFFIXES:
        yield path
        return
    from verispatial.ir.serialize import dumps

    text = dumps(program_of(path))
    with tempfile.TemporaryDirectory(prefix="verispatial-ttmetal-") as d:
        p = Path(d) / (Path(path).stem + ".json")
        p.write_text(text, encoding="utf-8")
        yield str(p)
