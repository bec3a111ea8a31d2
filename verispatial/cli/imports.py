"""``verispatial import ttlang`` and ``import ttmetal``: kernels written in another language read into program.json;
``certify`` reads the same sources through ``import_ttlang`` and ``certified_path``."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from verispatial.cli.exits import EXIT_OK, guard
from verispatial.cli.inputs import bad_input_of
from verispatial.cli.options import TtlangOptions, ttlang_options
from verispatial.cli.output import check_output_path, check_outputs_apart, console, write_atomic
from verispatial.errors import BadInput, SourcePlace, SourceRefusal, VerispatialError

if TYPE_CHECKING:
    from verispatial.ir.program import Program


def import_ttlang(path: str, opts: TtlangOptions) -> list[Any]:
    """The programs of TT-Lang source ``path``, one per shape class (``frontends.ttlang.import_file``); ``BadInput``
    for bad options, an unreadable file or a construct refused by name (file:line)."""
    from verispatial.frontends.ttlang import import_file

    try:
        return import_file(path, opts.operation, opts.shapes, opts.ranges, opts.target or "wormhole", opts.devices)
    except VerispatialError as e:
        raise bad_input_of(path, e) from None
    except RecursionError:
        raise BadInput(path, "", "nested too deeply to read") from None


def loader_of(program: Program) -> Callable[[str], Program]:
    """A program-file loader that returns ``program`` (already read from a source) whatever path it is given: how
    ``certify`` and ``explain`` hand an imported program to ``driver.files.certify_file``."""
    return lambda _path: program


def ttlang_loader(path: str) -> Callable[[str], Program]:
    """The loader of TT-Lang source ``path``'s one program at the shapes of its example call (``explain``);
    ``BadInput`` as ``import_ttlang`` raises it, or when the source makes more than one program (``--range`` shape
    classes are ``certify``'s: each is certified on its own)."""
    got = import_ttlang(path, TtlangOptions())
    if len(got) != 1:
        raise BadInput(path, "", f"has {len(got)} shape classes: import one (verispatial import ttlang) and explain it")
    return loader_of(got[0].program)


def run_import_ttlang(path: str, opts: TtlangOptions, out: str, quiet: bool) -> int:
    """The ``import ttlang`` command: write the program of each shape class (``OUT`` itself for one class, else
    ``OUT`` with ``.1``, ``.2``, ... before its suffix), every file computed before the first is written."""
    from verispatial.ir.serialize import dumps

    check_output_path(out)
    check_outputs_apart((("-o", out),), (path,))
    got = import_ttlang(path, opts)
    o = Path(out)
    names = [out] if len(got) == 1 else [str(o.with_name(f"{o.stem}.{i + 1}{o.suffix}")) for i in range(len(got))]
    texts = [(n, dumps(imp.program)) for n, imp in zip(names, got, strict=True)]
    for n, text in texts:
        write_atomic(n, text)
    if not quiet:
        for n, imp in zip(names, got, strict=True):
            console().print(f"wrote {n}: {imp.program.name} ({len(imp.program.programs)} engine programs; "
                            f"{imp.label})", markup=False, highlight=False)
    return EXIT_OK


# ---------------------------------------------------------------- tt-metal host descriptions (verispatial import ttmetal)

#: host descriptions are told from program.json by their suffix
HOST_SUFFIXES = (".yaml", ".yml")


def openable(file: str, kernel_root: str | None) -> str:
    """A kernel file as a message prints it, so that the user can open it: the front end names it relative to the
    host's ``kernel_root`` (machine-independent, what program.json keeps); printed relative to the working directory
    when it is under it, else absolute. ``file`` itself for an absolute one or without a kernel root."""
    if kernel_root is None or Path(file).is_absolute():
        return file
    full = (Path(kernel_root) / file).resolve()
    try:
        return full.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(full)


def ttmetal_program(host_path: str) -> Any:
    """The program of the host description ``host_path``; ``BadInput`` for whatever stops it (a kernel line named
    as the user can open it, ``openable``)."""
    from verispatial.errors import VerispatialError
    from verispatial.frontends.ttmetal import Refused, import_host

    try:
        return import_host(host_path)
    except Refused as e:
        raise ttmetal_refusal(e, host_kernel_root(host_path)) from None
    except VerispatialError as e:
        raise bad_input_of(host_path, e) from None
    except OSError as e:
        raise BadInput(host_path, "", f"cannot read: {e.strerror or e}") from None
    except RecursionError:
        raise BadInput(host_path, "", "a kernel nested too deeply to read") from None


def ttmetal_refusal(e: Any, kernel_root: str | None) -> SourceRefusal:
    """The command line's report of the tt-metal front end's refusal ``e`` (``frontends.ttmetal.Refused``): its
    locations, which the front end names from the host's ``kernel_root``, given in the one line and in their slots
    as the user can open them (``openable``); a construct in an included helper also names the kernel's call that
    got there."""

    def place(loc: Any) -> SourcePlace:
        return SourcePlace(openable(loc.file, kernel_root), loc.line, loc.text)

    call = e.loc.called_at
    return SourceRefusal("ttmetal", e.construct, place(e.loc), e.rule, detail=e.detail,
                         called_at=place(call) if call is not None else None)


def host_sources(path: str) -> list[str]:
    """The kernel sources the host description ``path`` names (none for a program.json, or for a host file that does
    not read: its read reports that): inputs of the run, which an output must not replace (``import ttmetal h.yaml
    -o reader.cpp`` wrote the program over the user's kernel)."""
    if Path(path).suffix not in HOST_SUFFIXES:
        return []
    from verispatial.frontends.ttmetal.host import load_host

    try:
        return [str(k.source) for k in load_host(path).kernels]
    except (VerispatialError, OSError, RecursionError):
        return []


def host_kernel_root(path: str) -> str | None:
    """The directory the kernels of the host description ``path`` are named from (its ``kernel_root``), which their
    source locations (``reader.cpp:16``) are relative to; None for a program.json or a host file that does not
    read."""
    if Path(path).suffix not in HOST_SUFFIXES:
        return None
    from verispatial.frontends.ttmetal.host import load_host

    try:
        return str(load_host(path).kernel_root)
    except (VerispatialError, OSError, RecursionError):
        return None


def run_import_ttmetal(host_path: str, out: str) -> int:
    """``verispatial import ttmetal``: write the program of ``host_path`` to ``out`` (whole or not at all)."""
    from verispatial.ir.serialize import dumps

    check_output_path(out)
    check_outputs_apart((("-o", out),), (host_path, *host_sources(host_path)))
    program = ttmetal_program(host_path)
    write_atomic(out, dumps(program))
    return 0


@contextlib.contextmanager
def certified_path(path: str) -> Iterator[str]:
    """The program.json ``certify`` reads for ``path``: ``path`` itself, or for a host description the program it
    imports to, written to a temporary file (so the proof cache keys on the program read, kernels included)."""
    if Path(path).suffix not in HOST_SUFFIXES:
        yield path
        return
    import attrs

    from verispatial.ir.serialize import dumps
    from verispatial.ir.source import relocated

    program = ttmetal_program(path)
    root = host_kernel_root(path)
    # the report names each kernel as the user can open it (program.json files keep the kernel-root-relative name)
    text = dumps(attrs.evolve(program, programs=tuple(
        attrs.evolve(ep, sources=relocated(ep.sources, lambda f: openable(f, root))) for ep in program.programs)))
    with tempfile.TemporaryDirectory(prefix="verispatial-ttmetal-") as d:
        p = Path(d) / (Path(path).stem + ".json")
        p.write_text(text, encoding="utf-8")
        yield str(p)


@click.group("import")
def import_group() -> None:
    """Read kernels written in another language into program.json (never running them; every op carries its source
    file:line)."""


@import_group.command("ttlang")
@click.argument("source", metavar="FILE.py")
@ttlang_options
@click.option("-o", "--out", required=True, metavar="PROGRAM.json",
              help="Where to write the program (one file per shape class: PROGRAM.1.json, ... when several).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on success.")
def import_ttlang_cmd(source: str, operation: str | None, shapes: tuple[str, ...], ranges: tuple[str, ...],
                      target: str | None, devices: int | None, out: str, quiet: bool) -> int:
    """Read the @ttl.operation of a TT-Lang source into program.json, every op carrying its file:line."""
    return guard(False, lambda: run_import_ttlang(source, TtlangOptions(operation, shapes, ranges, target, devices),
                                                   out, quiet))


@import_group.command("ttmetal")
@click.argument("host", metavar="HOST.yaml")
@click.option("-o", "--output", "out", metavar="PROGRAM.json", required=True, help="Where to write the program.")
def import_ttmetal_cmd(host: str, out: str) -> int:
    """A tt-metal host description and the C++ kernels it names (docs/ttmetal.md)."""
    return guard(False, lambda: run_import_ttmetal(host, out))
