"""What the commands read: program files, JSON documents, certificates, ``--trip`` values and the proof store;
everything wrong with them raises ``BadInput`` naming the file, the field and the rule."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from verispatial.driver.store import open_store  # untrusted machinery (verispatial/driver): a light import
from verispatial.errors import (
    BadInput,
    CertificateMismatch,
    CheckerError,
    InvalidProgram,
    ParseError,
    SourcePlace,
    SourceRefusal,
    SourceRefused,
    VerispatialError,
)

if TYPE_CHECKING:
    from verispatial.ir.program import Program
    from verispatial.ir.templated import TemplatedProgram


_Doc = TypeVar("_Doc")

def bad_input_of(where: str, err: VerispatialError) -> BadInput:
    """Translate a ``VerispatialError`` about file ``where`` into a ``BadInput`` with one line."""
    if isinstance(err, InvalidProgram):
        vs = [(v.entity, v.rule) for v in err.violations]
        if not vs:
            return BadInput(where, "", "invalid program")
        return BadInput(where, vs[0][0], vs[0][1], vs)
    if isinstance(err, ParseError):
        # load_program names a missing file or a directory by its path: do not say the path twice.
        field = "" if err.field in ("", where) else err.field
        return BadInput(where, field, err.rule)
    if isinstance(err, CertificateMismatch):
        return BadInput(where, "certificate", err.what)
    if isinstance(err, SourceRefused):
        return SourceRefusal(err.frontend, err.construct, SourcePlace(err.file, err.line), err.reason)
    return BadInput(where, "", str(err))


def load_program_file(path: str) -> Program:
    """Read, schema-check and validate ``path``; ``BadInput`` for anything wrong with it, ``CheckerError`` for a
    fault of the loader itself."""
    from verispatial.ir.serialize import load_program

    return _loading(path, load_program)


def load_document_file(path: str) -> Program | TemplatedProgram:
    """``load_program_file``, a templated program (format version 3) kept as its templates and instances (what
    ``certify``, ``validate`` and ``gate`` read: they never expand it)."""
    from verispatial.ir.serialize import load_document

    return _loading(path, load_document)


#: the sources a front end reads, told from program.json by their suffix (as ``certify`` and ``explain`` tell them):
#: what each is and the command that turns it into a program
_SOURCES = {
    ".yaml": ("a tt-metal host description", "verispatial import ttmetal {path} -o PROGRAM.json"),
    ".yml": ("a tt-metal host description", "verispatial import ttmetal {path} -o PROGRAM.json"),
    ".py": ("a TT-Lang source", "verispatial import ttlang {path} -o PROGRAM.json"),
}


def refuse_source(path: str) -> None:
    """``BadInput`` when ``path`` is a source a front end reads (a tt-metal host description, a TT-Lang source) given
    to a command that reads program.json documents only: it names the command and the import that makes a program
    of it (the JSON parser's "not valid JSON" said neither)."""
    known = _SOURCES.get(Path(path).suffix)
    if known is None:
        return
    import click

    ctx = click.get_current_context(silent=True)
    command = ctx.command_path if ctx is not None else "this command"
    what, fix = known
    raise BadInput(path, "", f"{what}, not a program.json document: {command} takes program.json documents only; "
                             f"import it first: {fix.format(path=path)}")


def _loading(path: str, load: Callable[[str], _Doc]) -> _Doc:
    """``load(path)`` with every failure told as ``BadInput`` (the file's fault) or ``CheckerError`` (the loader's); a
    source a front end reads is refused first (``refuse_source``)."""
    refuse_source(path)
    try:
        return load(path)
    except VerispatialError as e:
        raise bad_input_of(path, e) from None
    except OSError as e:
        raise BadInput(path, "", f"cannot read: {e.strerror or e}") from None
    except RecursionError:
        raise BadInput(path, "(document)", "JSON nested too deeply") from None
    except Exception as e:
        raise CheckerError(f"loading {path}: {type(e).__name__}: {e}") from None


def load_json_object(path: str, what: str) -> dict[str, Any]:
    """Read ``path`` as a JSON object (``what`` names it in messages, e.g. "certificate"); ``BadInput`` if it is
    missing, not a regular file, empty, not UTF-8, not JSON or not an object."""
    from verispatial.regular_file import not_regular

    p = Path(path)
    if (why := not_regular(p, f"a {what} JSON file")) is not None:
        raise BadInput(path, "", why)
    from verispatial.ir.limits import DOCUMENT_MAX_BYTES
    from verispatial.ir.serialize import json_kind, parse_json

    try:
        size = p.stat().st_size
        if size > DOCUMENT_MAX_BYTES:
            raise BadInput(path, "", f"{size} bytes: larger than the {DOCUMENT_MAX_BYTES // 2**20} MiB a document may "
                                     "have (verispatial/ir/limits.py)")
        data = p.read_bytes()
    except OSError as e:
        raise BadInput(path, "", f"cannot read: {e.strerror or e}") from None
    if not data.strip():
        raise BadInput(path, "", "the file is empty")

    try:
        d = parse_json(data)
    except ParseError as e:
        raise BadInput(path, e.field, e.rule) from None
    except RecursionError:
        raise BadInput(path, "(document)", "JSON nested too deeply") from None
    if not isinstance(d, dict):
        raise BadInput(path, "(document)", f"expected a JSON object ({what}), got {json_kind(d)}")
    return d


def parse_trips(specs: Sequence[str], program: Program) -> dict[str, int]:
    """``NAME=V`` pairs as a dict; ``BadInput`` (naming ``--trip``) for a malformed pair, an undeclared trip or
    a value outside the trip's ``[0, max]``."""
    maxes = program.trip_max()
    out: dict[str, int] = {}
    for spec in specs:
        name, eq, value = spec.partition("=")
        name = name.strip()
        if not eq or not name:
            raise BadInput("", spec, "expected NAME=VALUE", option="--trip")
        try:
            v = int(value.strip())
        except ValueError:
            raise BadInput("", spec, f"value {value.strip()!r} is not an integer", option="--trip") from None
        if name not in maxes:
            known = ", ".join(sorted(maxes)) or "none"
            raise BadInput("", spec, f"trip {name!r} is not declared by the program (declared: {known})", option="--trip")
        if not 0 <= v <= maxes[name]:
            raise BadInput("", spec, f"{v} is outside trip {name}'s range [0, {maxes[name]}]", option="--trip")
        if name in out:
            raise BadInput("", spec, f"trip {name} is given twice", option="--trip")
        out[name] = v
    return out


def open_proof_store(cache_dir: str | None, no_cache: bool) -> Any:
    """The persistent proof store of ``--cache-dir`` / ``--no-cache`` (``open_store``); ``BadInput`` when the
    directory named is a file."""
    if cache_dir is not None and Path(cache_dir).exists() and not Path(cache_dir).is_dir():
        raise BadInput(cache_dir, "", "exists and is not a directory, expected the proof cache directory")
    return open_store(cache_dir, no_cache)


def load_certificate_file(path: str) -> dict[str, Any]:
    """The certificate ``path`` (a JSON object of the certificate's shape: ``check_certificate_shape``);
    ``BadInput`` naming the field otherwise."""
    cert = load_json_object(path, "certificate")
    from verispatial.certify.certificate import check_certificate_shape

    try:
        check_certificate_shape(cert)
    except ParseError as e:
        raise BadInput(path, e.field, e.rule) from None
    return cert
