"""The host description: what a tt-metal program factory sets up, as data (docs/ttmetal.md).

Modelled on Metal 2.0's ``ProgramSpec`` (``DataflowBufferSpec``, ``KernelSpec``, ``WorkUnitSpec``, runtime args by
name); the legacy calls map onto it field for field (``CircularBufferConfig`` -> a buffer, ``CreateKernel`` -> a
kernel, ``CreateSemaphore`` -> a semaphore, ``SetRuntimeArgs`` -> a work unit's ``runtime_args``). Read from YAML
(PyYAML) or JSON and checked against ``host.schema.json``, shipped beside this module; every error is a
``ParseError`` naming the field and the rule.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import attrs

from verispatial.errors import ParseError
from verispatial.ir.core import Engine, Site
from verispatial.ir.limits import clip
from verispatial.ir.program import Shard
from verispatial.ir.target import Target, get_target
from verispatial.regular_file import not_regular

FORMAT = "verispatial.ttmetal-host"
#: the host description format version this verispatial reads
VERSION = 1

#: tt-metal ``tt::DataFormat`` names (as a program factory writes them) and the dtype each is here.
DATA_FORMATS = {"Float16_b": "bf16", "Float16": "fp16", "Float32": "fp32", "Bfp8_b": "bfp8_b", "Bfp4_b": "bfp4_b",
                "Int32": "int32", "UInt32": "uint32"}


@attrs.frozen
class TensorAddr:
    """A runtime-arg value that is a tensor's base address (``buffer->address()`` on the host)."""

    tensor: str


@attrs.frozen
class SemId:
    """A runtime- or compile-time-arg value that is a semaphore id (what ``CreateSemaphore`` returns)."""

    id: int
    name: str


@attrs.frozen
class TripRange:
    """A runtime-arg value known only as a range ``lo..hi``: a trip named ``trip`` in ``[0, hi - lo]``, plus ``lo``."""

    trip: str
    lo: int
    hi: int


#: A host-given argument value.
Value = int | TensorAddr | SemId | TripRange


@attrs.frozen
class HostBuffer:
    name: str
    index: int
    entry_size: int
    entries: int
    dtype: str
    page_tiles: int
    producer: str | None
    consumer: str | None
    cores: tuple[Site, ...] | None
    #: The tensor it is globally allocated on (``set_globally_allocated_address(*tensor.buffer())``), or None.
    tensor: str | None = None
    #: A Program-scope scratchpad (``scratchpads[]``, Metal 2.0's ``ScratchpadSpec``; ``Scratchpad<T>`` in a kernel,
    #: api/scratchpad.h:43-179), not a circular buffer: its ``index`` is ``SCRATCHPAD_BASE`` plus its position, one
    #: entry a tile, always read as scratch L1 (docs/semantics.md "Scratch buffers": its ops use its bytes whole).
    scratchpad: bool = False


#: The first buffer index the reading gives a scratchpad: past every circular-buffer index (0..63), so that no
#: ``DataflowBuffer`` token or CB id names one.
SCRATCHPAD_BASE = 64


@attrs.frozen
class HostShardSpec:
    """A sharded L1 tensor's layout as ttnn states it (``ShardSpec`` and ``TensorMemoryLayout``): ``layout``
    ``height``, ``width`` or ``block``, the shard grid ``cores`` (in the order ``_cores`` lists a range: row by row),
    one shard's ``shape`` in tiles ``(rows, columns)`` of the tensor flattened to 2D (``columns`` tiles a row:
    ``width``), and ``orientation`` (``row_major``: shards in row-major order of the grid)."""

    layout: str
    cores: tuple[Site, ...]
    rows: int
    cols: int
    width: int
    orientation: str

    def shard_on(self, tensor: str, site: Site) -> Shard | None:
        """The tiles of ``tensor`` core ``site`` holds (``Shard``: rows of ``cols`` tiles, ``width`` apart), or None
        off the grid. Height sharding hands core ``k`` (in grid order) the ``k``-th run of ``rows`` whole tensor rows,
        width sharding its ``k``-th block of ``cols`` columns; block sharding the shard at the core's row and column
        of the grid (``col_major``: its column and row)."""
        if site not in self.cores:
            return None
        tiles = self.rows * self.cols
        if self.layout == "height":
            k = self.cores.index(site)
            return Shard(tensor, k * self.rows * self.width, 0, 0, tiles)
        if self.layout == "width":
            k = self.cores.index(site)
            return Shard(tensor, k * self.cols, self.cols, self.width, tiles)
        x0, y0 = min(c.x for c in self.cores), min(c.y for c in self.cores)
        r, c = (site.y - y0, site.x - x0) if self.orientation == "row_major" else (site.x - x0, site.y - y0)
        return Shard(tensor, r * self.rows * self.width + c * self.cols, self.cols, self.width, tiles)


@attrs.frozen
class HostSemaphore:
    name: str
    initial_value: int
    cores: tuple[Site, ...] | None


@attrs.frozen
class HostKernel:
    name: str
    source: Path
    #: the name the kernel's ops are located by: ``source`` relative to the kernel root
    display: str
    engine: Engine
    noc: int
    compile_time_args: tuple[Value, ...]
    named_compile_time_args: dict[str, Value]
    runtime_args: tuple[str, ...]
    defines: dict[str, str]
    fp32_dest_acc_en: bool
    #: accessor name -> host tensor: ``TensorBinding{.tensor_parameter_name, .accessor_name}`` of the kernel's
    #: ``KernelSpec``, which names what ``TensorAccessor(tensor::NAME)`` reads (an accessor not bound is the tensor
    #: of its own name); sort's reader binds ``input_tensor`` to the value output (sort_program_factory.cpp:2019)
    tensor_bindings: dict[str, str] = attrs.field(factory=dict)
    #: how many positional runtime args follow the named ones (Metal 2.0 ``KernelSpec``
    #: ``advanced_options.num_runtime_varargs``, read by ``get_vararg(i)``; ttnn 0.81.1
    #: ``data_movement/sharded/reshard/device/reshard_program_factory_generic.cpp:798``)
    varargs: int = 0
    #: accessor name -> host buffer: ``DFBBinding{.dfb_spec_name, .accessor_name}`` of the kernel's ``KernelSpec``,
    #: which names the buffer ``DataflowBuffer(dfb::NAME)`` is (an accessor not bound is the buffer of its own name);
    #: clone's writer binds ``dst`` to the reader's ``SRC`` when it converts no dtype
    #: (data_movement/clone/device/clone_program_factory.cpp:113, 183-188)
    dfb_bindings: dict[str, str] = attrs.field(factory=dict)


@attrs.frozen
class WorkUnit:
    cores: tuple[Site, ...]
    kernels: tuple[str, ...]
    runtime_args: dict[str, dict[str, Value]]
    #: per kernel, its ``varargs`` values on every core of the unit, in ``get_vararg`` order (the run args'
    #: ``advanced_options.runtime_varargs[node]``, reshard_program_factory_generic.cpp:856-860)
    varargs: dict[str, tuple[Value, ...]] = attrs.field(factory=dict)


@attrs.frozen
class HostSpec:
    name: str
    target: Target
    path: Path
    kernel_root: Path
    include_dirs: tuple[Path, ...]
    tensors: tuple[dict[str, Any], ...]
    buffers: tuple[HostBuffer, ...]
    semaphores: tuple[HostSemaphore, ...]
    kernels: tuple[HostKernel, ...]
    work_units: tuple[WorkUnit, ...]
    #: Sharded tensors' layouts, by tensor name.
    shards: dict[str, HostShardSpec] = attrs.Factory(dict)

    def kernel(self, name: str) -> HostKernel:
        return next(k for k in self.kernels if k.name == name)

    def work_unit_of(self, kernel: str, site: Site) -> int | None:
        """The index in ``work_units`` of the unit running ``kernel`` on ``site`` (what a message names as the host
        field ``work_units[i]``), or None."""
        return next((i for i, u in enumerate(self.work_units) if kernel in u.kernels and site in u.cores), None)

    def varargs_of(self, kernel: str, site: Site) -> tuple[Value, ...] | None:
        """The varargs the work unit running ``kernel`` on ``site`` gives it, or None where it gives none."""
        for u in self.work_units:
            if kernel in u.kernels and site in u.cores:
                return u.varargs.get(kernel)
        return None

    def all_cores(self) -> tuple[Site, ...]:
        """Every core of every work unit, in first-seen order."""
        seen: dict[Site, None] = {}
        for w in self.work_units:
            seen.update(dict.fromkeys(w.cores))
        return tuple(seen)


#: a ``-D`` name as GCC takes it: an identifier, or a function-like macro's ``NAME(a, b)`` / ``NAME(a, ...)``
_MACRO_NAME = re.compile(r"[A-Za-z_]\w*(\(\s*(([A-Za-z_]\w*\s*(,\s*[A-Za-z_]\w*\s*)*(,\s*\.\.\.\s*)?)|\.\.\.\s*)?\))?")


@functools.cache
def schema() -> dict[str, Any]:
    """The shipped JSON Schema of host descriptions."""
    data: dict[str, Any] = json.loads((Path(__file__).with_name("host.schema.json")).read_text())
    return data


#: the targets a host description may name: the Tensix devices whose kernels the front end reads
_TTMETAL_TARGETS = frozenset({"wormhole_b0", "blackhole"})


def _cores(v: Any, where: str, mesh: tuple[int, int] | None = None) -> tuple[Site, ...]:
    """The cores ``"X,Y"`` or ``"X0,Y0-X1,Y1"`` (inclusive, X0 <= X1 and Y0 <= Y1), or a list of them, at ``where``.
    ``ParseError`` for a range that ends before it starts, for a
    core past the largest mesh the model takes (``ir/limits.py`` ``MESH_MAX``), before enumerating the range: a typo
    such as ``0,0-99999999,99999999`` would otherwise list 10**16 sites; and for a core outside the target's
    compute grid ``mesh`` (columns, rows), named here rather than by the program's validation of what the core
    holds."""
    from verispatial.ir.limits import MESH_MAX

    out: list[Site] = []
    for part in [v] if isinstance(v, str) else v:
        a, _, b = part.partition("-")
        x0, y0 = (int(t) for t in a.split(","))
        x1, y1 = (int(t) for t in b.split(",")) if b else (x0, y0)
        for x, y in ((x0, y0), (x1, y1)):
            if x >= MESH_MAX or y >= MESH_MAX:
                raise ParseError(where, f"core ({x},{y}) is past the largest mesh the model takes, {MESH_MAX} x "
                                        f"{MESH_MAX}")
            if mesh is not None and (x >= mesh[0] or y >= mesh[1]):
                raise ParseError(where, f"core ({x},{y}) is outside the target's {mesh[0]}x{mesh[1]} compute grid "
                                        f"(logical cores 0,0-{mesh[0] - 1},{mesh[1] - 1})")
        if x1 < x0 or y1 < y0:
            # tt-metal's CoreRange(start, end) takes start <= end on both axes; read as its mirror, a range typed
            # backwards would run the kernels on cores the host program never names
            raise ParseError(where, f"core range {part!r} ends before it starts: a range is \"X0,Y0-X1,Y1\" with "
                                    f"X0 <= X1 and Y0 <= Y1 (CoreRange(start, end)), got ({x0},{y0})-({x1},{y1})")
        for y in range(y0, y1 + 1):
            for x in range(x0, x1 + 1):
                out.append(Site(x, y))
    return tuple(dict.fromkeys(out))


_RANGE = re.compile(r"^\s*(\d+)\s*\.\.\s*(\d+)\s*$")


def _ranges_in_several_units(units: list[dict[str, Any]]) -> set[str]:
    """The runtime args (``n``) and varargs (``reader[0]``) given a range with no trip named in more than one work
    unit. Each unit is its own ``SetRuntimeArgs`` on its own cores, so the host may give them different values
    (core groups 1 and 2 of a factory's ``split_work_to_cores`` get different counts): such a range is a trip of its
    unit (``n@work_units[1]``), and only a trip named in the file (``{range: .., trip: T}``) says two units share one
    value. (Until 2026-12-08 the arg's name was the trip everywhere: a sender's ``n`` on one core and its receiver's
    ``n`` on another were one value, and a count of 3 against 4, which hangs the receiver, proved.)"""
    seen: dict[str, set[int]] = {}
    for i, u in enumerate(units):
        for given in u.get("runtime_args", {}).values():
            for a, v in given.items():
                if _unnamed_range(v):
                    seen.setdefault(a, set()).add(i)
        for n, given in u.get("varargs", {}).items():
            for j, v in enumerate(given):
                if _unnamed_range(v):
                    seen.setdefault(f"{n}[{j}]", set()).add(i)
    return {a for a, at in seen.items() if len(at) > 1}


def _named_trips(d: dict[str, Any]) -> set[str]:
    """Every trip a range of the host file names explicitly (``{range: "1..4", trip: T}``), wherever it stands."""
    out: set[str] = set()

    def visit(v: Any) -> None:
        if isinstance(v, dict):
            if "range" in v and isinstance(v.get("trip"), str):
                out.add(v["trip"])
            for x in v.values():
                visit(x)
        elif isinstance(v, list):
            for x in v:
                visit(x)

    visit({k: d.get(k) for k in ("kernels", "work_units")})
    return out


def _unnamed_range(v: Any) -> bool:
    """Whether an argument value is a range that names no trip (``"1..4"``, ``{range: "1..4"}``)."""
    return isinstance(v, str) or (isinstance(v, dict) and "range" in v and "trip" not in v)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different (``ParseError`` naming the first given twice)."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ParseError("(document)", f"key {k!r} appears twice in one object (readers disagree on which wins)")
        out[k] = v
    return out


def _unique_key_loader() -> type:
    """A YAML ``SafeLoader`` that refuses a key given twice in one mapping (PyYAML keeps the last silently, so a
    repeated runtime argument or field would be read as whichever came last): ``ParseError`` at its line."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    again = key in seen
                except TypeError:  # an unhashable key: SafeLoader's own message says so
                    break
                if again:
                    raise ParseError(f"line {key_node.start_mark.line + 1}", f"key {key!r} appears twice in one "
                                                                             "mapping (readers disagree on which wins)")
                seen.add(key)
            return super().construct_mapping(node, deep)

    return UniqueKeyLoader


def parse_document(path: Path) -> Any:
    """The host file ``path`` as a Python value: YAML for ``.yaml``/``.yml``, else JSON. ``ParseError`` when it
    cannot be read or parsed."""
    if (why := not_regular(path, "a host description")) is not None:
        raise ParseError("", why)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ParseError("(document)", "not UTF-8 text (a binary file?)") from None  # a program's words
    except OSError as e:
        raise ParseError("", f"cannot read: {e.strerror or e}") from None
    if path.suffix in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.load(text, Loader=_unique_key_loader())  # a SafeLoader: plain values only
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f"line {mark.line + 1}" if mark is not None else "(document)"
            raise ParseError(where, f"not YAML: {getattr(e, 'problem', None) or e}") from None
        except RecursionError:  # the document itself, before any kernel is read
            raise ParseError("(document)", "nested too deeply to read") from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as e:
        raise ParseError(f"line {e.lineno}", f"not JSON: {e.msg}") from None
    except RecursionError:
        raise ParseError("(document)", "nested too deeply to read") from None


def _expanded(path: str, where: str) -> str:
    """``path`` with its environment variables (``$X``, ``${X}``) expanded; ``ParseError`` at ``where`` naming one
    that is not set (``os.path.expandvars`` leaves it as written, which then read as a directory of that name)."""
    for m in re.finditer(r"\$(?:\{([^}]*)\}|(\w+))", path):
        name = m.group(1) if m.group(1) is not None else m.group(2)
        if name not in os.environ:
            raise ParseError(where, f"names ${name}, which is not set (environment variables are expanded)")
    return os.path.expandvars(path)


#: the NoC of a kernel that names none: ``ReaderDataMovementConfig``'s NoC 0 for a reader (RISCV_1) and
#: ``WriterDataMovementConfig``'s NoC 1 for a writer (RISCV_0), what program factories give them on Wormhole and
#: Blackhole (``preferred_noc_for_dram_read`` / ``_write``, tt-metal ``tt_metal/impl/kernels/kernel_types.cpp``); a
#: compute kernel issues on neither
_DEFAULT_NOC = {"reader": 0, "writer": 1, "compute": 0}


def _own_noc(on_noc: dict[tuple[Site, int], str], core: Site, k: HostKernel, where: str) -> None:
    """Record data-movement kernel ``k`` on its NoC at ``core``; ``ParseError`` at ``where`` when another kernel of
    the core is on that NoC already. A barrier compares the NoC interface's counter of responses received, which
    every processor's transfers on that NoC move, with its own processor's count of what it issued
    (``tt_metal/hw/inc/internal/tt-1xx/wormhole/noc_nonblocking_api.h:450-452``, ``:593-595``, ttnn 0.81.1), so
    two kernels of a core on one NoC hang or pass each other's barriers early, and tt-metal's host refuses the
    program ("Illegal NOC usage: data movement kernels on logical core {} cannot use the same NOC, doing so results
    in hangs!", ``ttnn/build/lib/libtt_metal.so``)."""
    other = on_noc.setdefault((core, k.noc), k.name)
    if other != k.name:
        raise ParseError(where, f"core {core} runs {other!r} and {k.name!r} on NoC {k.noc}: the data-movement "
                                "kernels of a core must use different NoCs (a barrier compares the NoC's counters, "
                                "which both kernels' transfers move, with its own kernel's count; tt-metal refuses "
                                "it: 'data movement kernels on logical core ... cannot use the same NOC, doing so "
                                "results in hangs')")


def load_host(path: str | Path) -> HostSpec:
    """Read, schema-check and cross-check the host description at ``path``. ``ParseError`` naming the field and the
    rule for anything wrong: an unknown kernel, buffer or semaphore named, an entry size that is not whole tiles of
    its format, a runtime arg given that the kernel does not declare, two kernels on one processor of a core, a
    missing kernel source."""
    from verispatial.ir.serialize import check_schema, json_kind

    p = Path(path)
    d = parse_document(p)
    if not isinstance(d, dict):
        got = ("nothing (the file holds no fields)" if d is None else "a list" if isinstance(d, list)
               else json_kind(d))
        raise ParseError("(document)", f"a host description is a mapping of its fields (name, kernels, work_units, "
                                       f"...), got {got}")
    # format and version before the schema: a later version's fields would be reported as violations of this one's
    if d.get("format") != FORMAT:
        raise ParseError("format", f"expected {FORMAT!r}, got {clip(repr(d.get('format')))}")
    if d.get("version") != VERSION:
        raise ParseError("version", f"this verispatial reads host descriptions of version {VERSION}, got "
                                    f"{clip(repr(d.get('version')))}")
    check_schema(d, schema())
    target = get_target(d.get("target", "wormhole_b0"))
    if target.name not in _TTMETAL_TARGETS:
        # a GPU target's tiles, accumulators and memory are not a Tensix core's: the kernels would be read against
        # the wrong machine (a 32x32 tile of the kernel counted as several of the target's)
        raise ParseError("target", f"{d['target']!r} is not a tt-metal device (known: "
                                   f"{', '.join(sorted(_TTMETAL_TARGETS))})")
    mesh = target.mesh
    given_root = d.get("kernel_root", ".")
    from verispatial.frontends.ttmetal.vendor import env_var, version_of_env, wheel_root

    release = version_of_env(given_root)
    if release is not None and env_var(release) not in os.environ:
        if wheel_root(download=False, version=release) is None:  # sets the variable to the user cache's copy
            raise ParseError("kernel_root", f"names ${env_var(release)}, which is not set, and the ttnn {release} "
                                            "wheel is not in the user cache (examples/ttmetal/README.md says how to "
                                            "get it)")
    root = Path(_expanded(given_root, "kernel_root"))
    root = root if root.is_absolute() else p.parent / root
    if not root.is_dir():
        raise ParseError("kernel_root", f"no such directory: {root}")
    incs = tuple(root / _expanded(i, f"include_dirs[{j}]") for j, i in enumerate(d.get("include_dirs", [])))
    for j, inc in enumerate(incs):
        if not inc.is_dir():  # as kernel_root: a typo would show only as a header not found, if ever
            raise ParseError(f"include_dirs[{j}]", f"no such directory: {d['include_dirs'][j]}")
    tensors = tuple(d.get("tensors", []))
    tnames = [t["name"] for t in tensors]
    shard_specs: dict[str, HostShardSpec] = {}
    for i, t in enumerate(tensors):
        target.bytes_per_tile(_dtype(t["dtype"], f"tensors[{i}].dtype", target))
        if tnames.count(t["name"]) > 1:
            raise ParseError(f"tensors[{i}].name", f"tensor {t['name']!r} declared twice")
        if "shard" in t:
            shard_specs[t["name"]] = _shard_spec(t, f"tensors[{i}].shard", target)
        if "values" in t:
            _stated_values(t, f"tensors[{i}].values", target)
    sems: list[HostSemaphore] = []
    for i, s in enumerate(d.get("semaphores", [])):
        if any(o.name == s["name"] for o in sems):
            raise ParseError(f"semaphores[{i}].name", f"semaphore {s['name']!r} declared twice")
        sems.append(HostSemaphore(s["name"], s.get("initial_value", 0), _cores(s["cores"], f"semaphores[{i}].cores", mesh)
                                 if "cores" in s else None))
    trips: dict[str, tuple[int, int]] = {}

    def value(v: Any, where: str, default_trip: str | None = None) -> Value:
        """The value given at ``where``; a range's trip, unless it names one, is ``default_trip`` (else the field's
        last name: a runtime arg's name, which several kernels and cores share)."""
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, int):
            return v
        if isinstance(v, float):  # 2.0: JSON Schema's "integer" takes a number with no fraction (the only floats here)
            return int(v)
        if isinstance(v, str) or "range" in v:
            text, trip = (v, None) if isinstance(v, str) else (v["range"], v.get("trip"))
            m = _RANGE.match(text)
            assert m is not None  # the schema's pattern
            lo, hi = int(m[1]), int(m[2])
            if lo > hi:
                raise ParseError(where, f"range {lo}..{hi} is empty (lo > hi)")
            name = trip or default_trip or where.rsplit(".", 1)[-1]
            if trip is None and name in named:
                raise ParseError(where, f"an unnamed range here would be trip {name!r}, which another field names: "
                                        "name this range's trip")
            if trips.setdefault(name, (lo, hi)) != (lo, hi):
                raise ParseError(where, f"trip {name!r} is given as {trips[name][0]}..{trips[name][1]} elsewhere")
            return TripRange(name, lo, hi)
        if "tensor" in v:
            if v["tensor"] not in tnames:
                raise ParseError(where, f"no tensor {v['tensor']!r} (declared: {', '.join(tnames) or 'none'})")
            return TensorAddr(v["tensor"])
        names = [s.name for s in sems]
        if v["semaphore"] not in names:
            raise ParseError(where, f"no semaphore {v['semaphore']!r} (declared: {', '.join(names) or 'none'})")
        return SemId(names.index(v["semaphore"]), v["semaphore"])

    kernels: list[HostKernel] = []
    # a named compile-time arg is its kernel's own too (``CreateKernel``'s ``named_compile_args``): a range with no
    # trip named that several kernels give is a trip per kernel (``reader.n``), as ``_ranges_in_several_units`` says
    # for work units
    # a trip the file names explicitly is never also an unnamed range's default (a new user's unit 0 named trip n
    # and unit 1's unnamed n: 1..4 joined it): such a default is made its own (``n@work_units[1]``, ``reader.n``)
    named = _named_trips(d)
    apart_named = named | {n for n, c in Counter(n for k in d["kernels"] for n, v in k.get("named_compile_time_args", {}).items()
                                         if _unnamed_range(v)).items() if c > 1}
    for i, k in enumerate(d["kernels"]):
        w = f"kernels[{i}]"
        if any(o.name == k["name"] for o in kernels):
            raise ParseError(f"{w}.name", f"kernel {k['name']!r} declared twice")
        src = root / k["source"]
        if (why := not_regular(src, "a kernel's C++ source")) is not None:
            raise ParseError(f"{w}.source", f"{src} {why}" if why != "no such file" else f"no such file: {src}")
        rt = tuple(k.get("runtime_args", []))
        if len(set(rt)) != len(rt):
            raise ParseError(f"{w}.runtime_args", "a runtime arg is named twice")
        bindings = dict(k.get("tensor_bindings", {}))
        for acc, t in bindings.items():
            if t not in tnames:
                raise ParseError(f"{w}.tensor_bindings.{acc}",
                                 f"no tensor {t!r} (declared: {', '.join(tnames) or 'none'})")
        for name in k.get("defines", {}):
            if not _MACRO_NAME.fullmatch(name):
                # GCC refuses ``-D1BAD=1`` ("macro names must be identifiers"): no build of the kernel has it
                raise ParseError(f"{w}.defines", f"{name!r} is not a macro name (an identifier, or NAME(PARAMS) for a "
                                                 "function-like one)")
        kernels.append(HostKernel(
            k["name"], src, Path(k["source"]).as_posix(), Engine(k["processor"]),
            k.get("noc", _DEFAULT_NOC[k["processor"]]),
            # a positional compile-time arg is the kernel's own (each CreateKernel has its compile_args): its trip
            # is named with the kernel's, two kernels' get_compile_time_arg_val(0) are two values
            tuple(value(v, f"{w}.compile_time_args[{j}]", f"{k['name']}.compile_time_args[{j}]")
                  for j, v in enumerate(k.get("compile_time_args", []))),
            {n: value(v, f"{w}.named_compile_time_args.{n}", f"{k['name']}.{n}" if n in apart_named else None)
             for n, v in k.get("named_compile_time_args", {}).items()},
            rt, {n: str(int(v) if isinstance(v, bool) else v) for n, v in k.get("defines", {}).items()},
            bool(k.get("fp32_dest_acc_en", False)), bindings, k.get("varargs", 0), dict(k.get("dfb_bindings", {}))))
    knames = [k.name for k in kernels]
    bufs: list[HostBuffer] = []
    for i, b in enumerate(d.get("buffers", [])):
        w = f"buffers[{i}]"
        on = b.get("globally_allocated")
        if isinstance(on, bool) or (on is not None and on not in shard_specs):
            sharded = ", ".join(sorted(shard_specs)) or "none"
            raise ParseError(f"{w}.globally_allocated", f"names the sharded tensor whose buffer it sits on "
                                                        f"(set_globally_allocated_address(*tensor.buffer())), got "
                                                        f"{on!r} (sharded tensors: {sharded})")
        if b["index"] >= target.max_cbs:  # the schema's 63 is Blackhole's; Wormhole's firmware has 32
            raise ParseError(f"{w}.index", f"{b['index']} is past {target.name}'s {target.max_cbs} CB indices "
                                           f"(0..{target.max_cbs - 1}, NUM_CIRCULAR_BUFFERS)")
        if any(o.index == b["index"] and (o.cores is None or "cores" not in b) for o in bufs):
            raise ParseError(f"{w}.index", f"buffer index {b['index']} declared twice")
        for role in ("producer", "consumer"):
            if role in b and b[role] not in knames:
                raise ParseError(f"{w}.{role}", f"no kernel {b[role]!r} (declared: {', '.join(knames)})")
        dtype = _dtype(b["data_format"], f"{w}.data_format", target)
        tile = target.bytes_per_tile(dtype)
        if b["entry_size"] % tile:
            raise ParseError(f"{w}.entry_size", f"{b['entry_size']} B is not a whole number of {dtype} tiles "
                                                f"({tile} B each): row-major pages are not in the IR")
        usable = target.local_bytes - target.reserved_base
        if b["entry_size"] > usable:
            # checked here: a page past L1 would first be refused by the IR's limit on one op's tiles, far from it
            raise ParseError(f"{w}.entry_size", f"a page of {b['entry_size']} B is larger than a core's usable L1 "
                                                f"({usable} B on {target.name})")
        bufs.append(HostBuffer(b["name"], b["index"], b["entry_size"], b["entries"], dtype, b["entry_size"] // tile,
                               b.get("producer"), b.get("consumer"),
                               _cores(b["cores"], f"{w}.cores", mesh) if "cores" in b else None,
                               on))
    bnames = [b.name for b in bufs]
    for i, k in enumerate(kernels):
        for acc, b in k.dfb_bindings.items():
            if b not in bnames:
                raise ParseError(f"kernels[{i}].dfb_bindings.{acc}",
                                 f"no buffer {b!r} (declared: {', '.join(bnames) or 'none'})")
    for i, sp in enumerate(d.get("scratchpads", [])):
        w = f"scratchpads[{i}]"
        if any(o.name == sp["name"] for o in bufs):
            raise ParseError(f"{w}.name", f"{sp['name']!r} names a buffer or scratchpad already")
        dtype = _dtype(sp["data_format"], f"{w}.data_format", target)
        tile = target.bytes_per_tile(dtype)
        if sp["size"] % tile:
            raise ParseError(f"{w}.size", f"{sp['size']} B is not a whole number of {dtype} tiles ({tile} B each)")
        bufs.append(HostBuffer(sp["name"], SCRATCHPAD_BASE + i, tile, sp["size"] // tile, dtype, 1, None, None,
                               _cores(sp["cores"], f"{w}.cores") if "cores" in sp else None, scratchpad=True))
    units: list[WorkUnit] = []
    placed: dict[tuple[Site, Engine], tuple[str, int]] = {}
    on_noc: dict[tuple[Site, int], str] = {}
    apart = _ranges_in_several_units(d["work_units"]) | named
    for i, u in enumerate(d["work_units"]):
        w = f"work_units[{i}]"
        cores = _cores(u["cores"], f"{w}.cores", mesh)
        for j, n in enumerate(u["kernels"]):
            if n not in knames:
                raise ParseError(f"{w}.kernels", f"no kernel {n!r} (declared: {', '.join(knames)})")
            if n in u["kernels"][:j]:  # a kernel runs once per core (one program per processor)
                raise ParseError(f"{w}.kernels", f"kernel {n!r} is listed twice")
            k = kernels[knames.index(n)]
            for c in cores:
                other, j = placed.setdefault((c, k.engine), (n, i))
                if j != i:  # a core in two work units: one program per processor (the IR's rule, said here)
                    raise ParseError(f"{w}.cores", f"core {c} is also in work_units[{j}], which runs {other!r} on "
                                                   f"its {k.engine.value} processor")
                if other != n:
                    raise ParseError(f"{w}.kernels", f"core {c} runs {other!r} and {n!r} on one {k.engine.value} "
                                                     f"processor")
                if k.engine is not Engine.COMPUTE:
                    _own_noc(on_noc, c, k, f"{w}.kernels")
        args: dict[str, dict[str, Value]] = {}
        for n, given in u.get("runtime_args", {}).items():
            if n not in u["kernels"]:
                raise ParseError(f"{w}.runtime_args.{n}", f"kernel {n!r} is not in this work unit")
            k = kernels[knames.index(n)]
            for a in given:
                if a not in k.runtime_args:
                    raise ParseError(f"{w}.runtime_args.{n}.{a}", f"kernel {n!r} declares no runtime arg {a!r} "
                                                                  f"(declares: {', '.join(k.runtime_args) or 'none'})")
            args[n] = {a: value(v, f"{w}.runtime_args.{n}.{a}", f"{a}@{w}" if a in apart else None)
                       for a, v in given.items()}
        varargs: dict[str, tuple[Value, ...]] = {}
        for n, given in u.get("varargs", {}).items():
            if n not in u["kernels"]:
                raise ParseError(f"{w}.varargs.{n}", f"kernel {n!r} is not in this work unit")
            k = kernels[knames.index(n)]
            if len(given) != k.varargs:
                # the run args hold exactly the kernel's count on every node (the factory pads shorter blocks:
                # reshard_program_factory_generic.cpp:856, Varargs(num_varargs, 0u))
                raise ParseError(f"{w}.varargs.{n}", f"kernel {n!r} declares {k.varargs} varargs, got "
                                                     f"{len(given)} values")
            varargs[n] = tuple(value(v, f"{w}.varargs.{n}[{j}]", f"{n}[{j}]@{w}" if f"{n}[{j}]" in apart else None)
                               for j, v in enumerate(given))
        units.append(WorkUnit(cores, tuple(u["kernels"]), args, varargs))
    every = tuple(dict.fromkeys(c for u in units for c in u.cores))
    for c in dict.fromkeys((*every, *(c for s in sems for c in s.cores or ()))):
        held = [i for i, s in enumerate(sems) if c in (s.cores or every)]
        if len(held) > target.max_semaphores:  # named here, at the host's field, before the IR says it of a site
            raise ParseError(f"semaphores[{held[target.max_semaphores]}]",
                             f"core {c} holds {len(held)} semaphores, past {target.name}'s {target.max_semaphores} per "
                             "core (NUM_SEMAPHORES)")
    for i, hb in enumerate(bufs):
        if hb.tensor is not None:
            off = [c for c in (hb.cores or every) if c not in shard_specs[hb.tensor].cores]
            if off:
                raise ParseError(f"buffers[{i}].globally_allocated", f"tensor {hb.tensor!r} has no shard on core "
                                                                     f"{off[0]}, which the buffer is on")
    return HostSpec(d["name"], target, p, root, incs, tensors, tuple(bufs), tuple(sems), tuple(kernels), tuple(units),
                    shard_specs)


def _stated_values(t: dict[str, Any], where: str, target: Target) -> None:
    """A tensor's stated data (``values``, frontends/ttmetal/stated.py): words of a tensor the host writes and no
    kernel may (an input or a param), of a 32-bit dtype, inside its page 0. ``ParseError`` naming the field
    otherwise."""
    dtype = _dtype(t["dtype"], where, target)
    if t["role"] not in ("input", "param"):
        raise ParseError(where, f"tensor data is stated only of an input or param tensor, the host's to write; "
                                f"{t['name']!r} is {t['role']}")
    if dtype not in ("int32", "uint32"):
        raise ParseError(where, f"stated words are 32-bit: {t['name']!r} is {dtype}, not int32 or uint32")
    low = next((v for v in t["values"] if v < 0), None)
    if low is not None and dtype != "int32":
        raise ParseError(where, f"{low} is not a uint32 word of {t['name']!r} (0..4294967295; a signed word is stated "
                                "of an int32 tensor only)")
    if len(t["values"]) * 4 > target.bytes_per_tile(dtype):
        raise ParseError(where, f"{len(t['values'])} words are past the {target.bytes_per_tile(dtype)} B of "
                                f"{t['name']!r}'s page 0")


def _shard_spec(t: dict[str, Any], where: str, target: Target) -> HostShardSpec:
    """A tensor's ``shard`` (ttnn's ``ShardSpec``) in tiles, checked against its shape: the shard shape whole tiles, the
    tensor a whole number of shards (uneven last shards are not said: declare the tensor at its padded shape), as
    many shards as cores, a block grid the shards' rows and columns. ``ParseError`` naming the field otherwise."""
    sh = t["shard"]
    th, tw = target.tile
    shape = list(t["shape"])
    if len(shape) < 2 or shape[-2] % th or shape[-1] % tw:
        raise ParseError(f"{where}", f"a sharded tensor's last two dimensions are whole tiles ({th}x{tw}), got "
                                     f"{shape}")
    h, w = sh["shape"]
    if h % th or w % tw:
        raise ParseError(f"{where}.shape", f"a shard is whole tiles ({th}x{tw}), got {[h, w]}")
    height = 1
    for d in shape[:-1]:
        height *= d
    ht, wt, rows, cols = height // th, shape[-1] // tw, h // th, w // tw
    if ht % rows or wt % cols:
        raise ParseError(f"{where}.shape", f"the tensor's {ht}x{wt} tiles are not a whole number of {rows}x{cols}-tile "
                                           "shards (uneven shards are not said: declare the tensor at its padded "
                                           "shape)")
    cores = _cores(sh["cores"], f"{where}.cores", target.mesh)
    n_h, n_w = ht // rows, wt // cols
    layout, orientation = sh["layout"], sh.get("orientation", "row_major")
    if layout == "height" and (n_w != 1 or n_h != len(cores)):
        raise ParseError(f"{where}", f"height sharding takes whole rows into one shard a core: {n_h}x{n_w} shards on "
                                     f"{len(cores)} cores")
    if layout == "width" and (n_h != 1 or n_w != len(cores)):
        raise ParseError(f"{where}", f"width sharding takes whole columns into one shard a core: {n_h}x{n_w} shards on "
                                     f"{len(cores)} cores")
    if layout == "block":
        gx = len({c.x for c in cores})
        gy = len({c.y for c in cores})
        want = (n_w, n_h) if orientation == "row_major" else (n_h, n_w)
        if gx * gy != len(cores) or (gx, gy) != want:
            raise ParseError(f"{where}", f"block sharding puts the {n_h}x{n_w} shards on a grid of as many columns and "
                                         f"rows ({orientation}), got {gx}x{gy} cores")
    return HostShardSpec(layout, cores, rows, cols, wt, orientation)


def _dtype(name: str, where: str, target: Target) -> str:
    dtype = DATA_FORMATS.get(name, name)
    if dtype not in target.tile_bytes:
        raise ParseError(where, f"unknown data format {name!r} (known: {', '.join(sorted(target.tile_bytes))})")
    return dtype
