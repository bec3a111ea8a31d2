"""Reading kernel C++: tree-sitter-cpp parses each preprocessed file; this module finds ``kernel_main`` (or the
legacy ``MAIN`` / ``namespace NAMESPACE { void MAIN }`` of compute kernels), every function the file and its
followed headers define, and their file-scope constants.

tree-sitter rather than libclang: a kernel includes device headers (``api/dataflow/dataflow_api.h``, LLK headers)
that only compile with the RISC-V toolchain and the JIT build's defines; a tolerant parser reads the kernel's own
statements without them, and the device API is modelled by name (docs/ttmetal.md). Quoted ``#include``s of the op's
own helpers are followed; the device API's headers (``api/``, ``tt_metal/``, ``hostdevcommon/``, system headers) are
not.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

import attrs

from verispatial.frontends.ttmetal import vendor
from verispatial.frontends.ttmetal.macros import Macros
from verispatial.frontends.ttmetal.preprocess import Include, host_macros, preprocess
from verispatial.frontends.ttmetal.refusals import Refused
from verispatial.ir.source import SourceLoc
from verispatial.regular_file import not_regular

#: include prefixes of the device API: modelled by name, never read
DEVICE_PREFIXES = ("api/", "tt_metal/", "hostdevcommon/", "debug/", "internal/", "compute_kernel_api", "dataflow_api",
                   "llk_", "ckernel", "risc_", "noc_", "firmware", "tools/profiler", "tt-metalium/")

#: include prefixes of ttnn's own helper headers, followed also when included with angle brackets
OP_PREFIXES = ("ttnn/",)
#: Headers of the compiler's own libraries (the C++17 library, libstdc++'s C wrappers, newlib's C headers) that
#: riscv-tt-elf-g++ finds on its system include path: passed over, their declarations modelled by name where kernels
#: use them. Any other ``<...>`` header is looked for as a quoted one is, then on the JIT's include path, and refused
#: when found nowhere (GCC stops there).
SYSTEM_HEADERS = frozenset({
    # C++17 library
    "algorithm", "any", "array", "atomic", "bit", "bitset", "cassert", "cctype", "cerrno", "cfenv", "cfloat",
    "charconv", "chrono", "cinttypes", "climits", "clocale", "cmath", "complex", "condition_variable", "csetjmp",
    "csignal", "cstdarg", "cstddef", "cstdint", "cstdio", "cstdlib", "cstring", "ctime", "cuchar", "cwchar",
    "cwctype", "deque", "exception", "execution", "filesystem", "forward_list", "fstream", "functional", "future",
    "initializer_list", "iomanip", "ios", "iosfwd", "iostream", "istream", "iterator", "limits", "list", "locale",
    "map", "memory", "memory_resource", "mutex", "new", "numeric", "optional", "ostream", "queue", "random", "ratio",
    "regex", "scoped_allocator", "set", "shared_mutex", "span", "sstream", "stack", "stdexcept", "streambuf",
    "string", "string_view", "system_error", "thread", "tuple", "type_traits", "typeindex", "typeinfo",
    "unordered_map", "unordered_set", "utility", "valarray", "variant", "vector", "version",
    # C headers (newlib, GCC's own)
    "assert.h", "ctype.h", "errno.h", "float.h", "inttypes.h", "limits.h", "math.h", "stdarg.h", "stdbool.h",
    "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "string.h", "strings.h", "time.h", "sys/types.h",
})

#: Attribute macros of the device headers (tt_metal/hw/inc/...: ``tt_l1_ptr`` is ``__attribute__((rvtt_l1_ptr))``,
#: ``FORCE_INLINE`` is ``inline __attribute__((always_inline))``): they qualify, they do not compute.
DEVICE_MACROS = {"tt_l1_ptr": "", "tt_reg_ptr": "", "FORCE_INLINE": "inline", "ALWI": "inline",
                 "ALWAYS_INLINE": "inline", "NOINLINE": "", "TT_KERNEL": "static inline"}
#: Function-like macros of the device headers that only compute an argument: ``NOC_X(x)`` / ``NOC_Y(y)`` are
#: ``NOC_0_X(noc_index, noc_size_x, (x))`` (tt_metal/hw/inc/internal/tt-1xx/risc_common.h:21-22), which is ``x`` on
#: Wormhole and Blackhole (internal/tt-1xx/wormhole/noc_nonblocking_api.h:27-28, blackhole/noc_nonblocking_api.h:45-46):
#: the coordinate a kernel holds is the one its NoC takes
DEVICE_FUNCTION_MACROS = {"NOC_X(x)": "(x)", "NOC_Y(y)": "(y)"}
#: What the JIT build defines for a compute kernel (kernel_lib/dest_helpers.hpp:44-83 reads them):
#: ``DST_SYNC_MODE`` from ``ComputeConfig.dst_full_sync_en`` (half sync: the host format has no full-sync option) and
#: one TRISC's ``UCK_CHLKC_*`` (each of unpack, math and pack is compiled with its own; the helpers' decisions read
#: here are the same in all three: ``DST_ACCUM_MODE``, the buffer formats the JIT equalizes, tilize_helpers.inl:22)
COMPUTE_JIT_MACROS = {"DST_SYNC_MODE": "DstSync::SyncHalf", "UCK_CHLKC_MATH": "1"}
#: What the JIT build defines for every kernel, data movement and compute alike: ``KERNEL_BUILD`` (tt-metal's JIT
#: passes ``-DKERNEL_BUILD`` to a kernel's compile and ``-DFW_BUILD`` to firmware's: both strings are in the wheel's
#: build/lib/libtt_metal.so; the device headers test it, tt_metal/hw/inc/api/debug/kernel_profiler.hpp:334,
#: hostdev/fabric_edm_packet_header.hpp:11). Headers shared by host and kernel put each side under it: the
#: compile-time-arg structs' kernel constructors reading ``get_compile_time_arg_val`` are under ``#ifdef
#: KERNEL_BUILD``, the host's under ``#ifndef`` (deepseek_prefill/combine_fabric2d/device/kernels/dataflow/
#: combine_fabric2d_collector_ct_args.hpp:34-76)
KERNEL_JIT_MACROS = {"KERNEL_BUILD": "1",
                     # what riscv-tt-elf-g++ itself predefines under the JIT's ``-std=c++17`` and ``-march=rv32...``
                     # (both flags in the wheel's build/lib/libtt_metal.so): a group under ``#ifndef __cplusplus``
                     # (noc.h:9) is none GCC builds, one under ``#ifdef __cplusplus`` is built
                     "__cplusplus": "201703L", "__riscv": "1"}
#: Constants of the device headers: what kernels compare semaphores with (hostdevcommon/common_values.hpp) and the
#: tile geometry (tt_metal/api/tt-metalium/constants.hpp, ``tt::constants``; named with or without the namespace).
DEVICE_CONSTANTS = {"VALID": 1, "INVALID": 0, "TILE_HEIGHT": 32, "TILE_WIDTH": 32, "TILE_HW": 1024,
                    "FACE_HEIGHT": 16, "FACE_WIDTH": 16, "FACE_HW": 256,
                    # <stdint.h>'s limits of the fixed-width types (``child_id != UINT32_MAX``,
                    # writer_decode_all.cpp:190: the host's "no child" marker)
                    "UINT8_MAX": 0xFF, "UINT16_MAX": 0xFFFF, "UINT32_MAX": 0xFFFFFFFF, "INT32_MAX": 0x7FFFFFFF}
#: namespaces a device constant is named from
CONSTANT_NAMESPACES = frozenset({"constants", "tt::constants", "tt::tt_metal::constants"})
#: ``sizeof`` of the fixed-width and built-in types kernels take sizes of (RISC-V ILP32: int, long and pointers are
#: 4 bytes, the GCC toolchain of tt_metal/hw)
TYPE_SIZES = {"uint8_t": 1, "int8_t": 1, "char": 1, "bool": 1, "uint16_t": 2, "int16_t": 2, "uint32_t": 4,
              "int32_t": 4, "int": 4, "uint": 4, "unsigned": 4, "float": 4, "uint64_t": 8, "int64_t": 8,
              "double": 8}

#: how deep #includes are followed (helpers include helpers; a cycle is cut by the seen set)
INCLUDE_DEPTH = 8
#: The device-side directories of the JIT's include path, relative to the tt-metal root (the wheel's ``ttnn/``, which
#: holds ``tt_metal/`` and ``ttnn/cpp/``): the strings of the wheel's build/lib/libtt_metal.so, for Wormhole and
#: Blackhole. A quoted include found on none of the reading's own bases but here is the device API's (GCC finds
#: ``"experimental/kernel_args.h"`` under ``tt_metal/hw/inc``): modelled by name, as the ``DEVICE_PREFIXES`` are.
JIT_INCLUDE_DIRS = tuple(
    [f"tt_metal/hw/{d}" for d in ("inc", "inc/ethernet", "inc/internal", "inc/internal/tt-1xx")]
    + [f"tt_metal/hw/inc/internal/tt-1xx/{d}" for d in ("wormhole", "wormhole/noc", "wormhole/wormhole_b0_defines",
                                                        "blackhole", "blackhole/noc", "blackhole/blackhole_defines")]
    + [f"tt_metal/hw/ckernels/{a}/metal/{d}" for a in ("wormhole_b0", "blackhole")
       for d in ("common", "llk_api", "llk_api/llk_sfpu", "llk_io")]
    + [f"tt_metal/tt-llk/tt_llk_{a}/{d}" for a in ("wormhole_b0", "blackhole") for d in ("common/inc", "llk_lib")]
    + ["tt_metal/tt-llk/common", "tt_metal/hw/firmware/src/tt-1xx", "tt_metal/hostdevcommon/api", "tt_metal/api",
       "tt_metal", "ttnn", "ttnn/cpp"])
#: Headers of the SFPI compiler itself (its own include directory, ``runtime/sfpi`` in the JIT's strings; the toolchain
#: is downloaded apart from the wheel, tt_metal/sfpi-version): found by GCC without any ``-I``
#: (experimental/deepseek/moe/moe_gate_mm/device/kernels/bias_bcast_sfpu.h includes both)
SFPI_HEADERS = frozenset({"sfpi.h", "lltt.h"})
#: how often a header without ``#pragma once`` is read (once per includer that needs another part of it)
REREADS = 4


@functools.cache
def _once(path: Path) -> bool:
    """Whether the header at ``path`` says ``#pragma once``."""
    return re.search(r"^\s*#\s*pragma\s+once", path.read_text(encoding="utf-8", errors="replace"), re.M) is not None


@functools.cache
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_cpp

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cpp.language()))


@attrs.frozen(eq=False)
class Unit:
    """One read file: its display name, source lines (after preprocessing, line for line the file's), tree, and the
    file's lines as written (what a location shows: a macro call, not its expanded tokens)."""

    file: str
    lines: tuple[str, ...]
    root: Any
    written: tuple[str, ...] = ()

    def loc(self, node: Any) -> SourceLoc:
        """Where ``node`` starts: 1-based line and column, the column counting characters (as an editor and SARIF's
        ``unicodeCodePoints`` do; tree-sitter counts the line's UTF-8 bytes), and the line's statement."""
        row, col = node.start_point
        line = self.lines[row] if row < len(self.lines) else ""
        chars = len(line.encode()[:col].decode(errors="ignore"))
        shown = self.written[row] if row < len(self.written) else line
        same = _same_prefix(line, shown)
        if chars > same:
            # past the first macro the line expands: the column of that macro's name as written
            chars = same
            while chars > 0 and (shown[chars - 1].isalnum() or shown[chars - 1] == "_"):
                chars -= 1
        return SourceLoc(self.file, row + 1, chars + 1, shown.strip()[:200])


@functools.lru_cache(maxsize=4096)
def _same_prefix(line: str, shown: str) -> int:
    """How many characters a preprocessed line and the line as written share from the start (``Unit.loc``: asked
    for every location a reading takes, the same few lines each time)."""
    return next((i for i, (a, b) in enumerate(zip(line, shown, strict=False)) if a != b), min(len(line), len(shown)))


@attrs.frozen(eq=False)
class Program:
    """A kernel and what it can call: ``functions`` by name (bare and qualified), ``globals`` the file-scope
    declarations in reading order, each with the unit it is in."""

    main: Any
    main_unit: Unit
    functions: dict[str, tuple[Any, Unit]]
    globals: list[tuple[Any, Unit]]
    #: ``main`` is a named-arg entry point (``TT_KERNEL void compute(uint32_t group)``, possibly a template): the
    #: JIT generates ``kernel_main()`` calling it (experimental/kernel_args.h), so its template parameters are named
    #: compile-time args and its parameters named runtime args
    named_entry: bool = False
    #: every definition of a function by bare name, for overload resolution (``input(cb)`` and ``input(cb,
    #: BroadcastDim::Col)`` of kernel_lib/eltwise/core/chain.inl:210-242 are five overloads)
    overloads: dict[str, list[tuple[Any, Unit]]] = attrs.field(factory=dict)
    #: the namespace each of ``overloads`` and of the file-scope declarations of ``globals`` is in (``a::b``; ``""``
    #: the global one), by (file, start byte)
    namespace_of: dict[tuple[str, int], str] = attrs.field(factory=dict)
    #: default arguments a forward declaration states and its definition does not (chain.hpp:381 declares
    #: ``input(uint32_t cb_id, WaitPolicy wait = WaitPolicy::PerTile, ...)``, chain.inl:210 defines it without them):
    #: ``name/arity`` -> the declaration's parameter list and its unit; for a class template, ``name`` -> its
    #: template parameter list
    declared: dict[str, tuple[Any, Unit]] = attrs.field(factory=dict)
    #: structs and classes the kernel or a followed header defines, by bare and qualified name
    structs: dict[str, StructDef] = attrs.field(factory=dict)
    #: ``structs`` per bare name, by key (filled at first use: ``objects.struct_of``)
    struct_homes: dict[str, dict[str, StructDef]] = attrs.field(factory=dict)
    #: variable templates (``template <typename T> inline constexpr bool is_accumulate_v = is_accumulate<T>::value;``,
    #: kernel_lib/reduce_helpers_compute.hpp): name -> (template parameter list, initializer, unit)
    var_templates: dict[str, tuple[Any, Any, Unit]] = attrs.field(factory=dict)
    #: the enums the kernel and its followed headers define, by bare name: enumerator -> value (``enums.py``)
    enums: dict[str, dict[str, int]] = attrs.field(factory=dict)
    #: the enumerators of unscoped enums (``enum Op { OP_ADD, OP_SUB };``), usable without their enum's name: name ->
    #: value, only names one value is given to
    unscoped: dict[str, int] = attrs.field(factory=dict)
    #: namespace aliases (``namespace ckl = compute_kernel_lib;``, eltwise_copy.cpp:14) at file or namespace scope:
    #: alias -> its target as written (``::a::b`` absolute, ``a::b`` as C++ looks it up where the alias stands), None
    #: for a name of several meanings (two targets, or also a namespace's name: which one C++ finds depends on the
    #: scopes where it is named)
    namespace_aliases: dict[str, str | None] = attrs.field(factory=dict)
    #: the bare names of the namespaces the kernel and its followed headers define
    namespaces: frozenset[str] = frozenset()
    #: their full names (``a``, ``a::b`` for ``namespace a { namespace b {`` or ``namespace a::b {``)
    namespace_paths: frozenset[str] = frozenset()


def add_namespace_alias(aliases: dict[str, str | None], name: str, target: str) -> None:
    """Record namespace alias ``name`` of ``target`` in ``aliases``: a second target naming another namespace makes
    it None. Two targets name one namespace when they are equal once each alias they start with is replaced by its
    own target (``namespace g = a::b::c;`` and ``namespace g = k::c;`` after ``namespace k = a::b;``: the norm
    kernels' headers declare their ``generic`` both ways)."""
    if name not in aliases:
        aliases[name] = target
        return
    old = aliases[name]
    if old is not None and alias_free(aliases, old) != alias_free(aliases, target):
        aliases[name] = None


def alias_clashes(name: str, target: str, aliases: dict[str, str | None], paths: frozenset[str]) -> bool:
    """Whether alias ``name`` of ``target`` is also the bare name of a namespace other than the one it names: which of
    the two ``name::f`` finds depends on the scope it stands in, which the reading does not follow. A namespace of
    that name that *is* the target (``namespace generic = norm::kernel_util::generic;``) names the same thing either
    way."""
    to = alias_free(aliases, target)
    return any(p.rsplit("::", 1)[-1] == name and p != to for p in paths)


def alias_free(aliases: dict[str, str | None], target: str) -> str:
    """``target`` with the aliases it starts with replaced by their targets, without a leading ``::``; an alias of
    several meanings (None) or one met twice is left as written (then only an equal spelling matches)."""
    parts = target.lstrip(":").split("::")
    seen: set[str] = set()
    while len(parts) > 0 and parts[0] not in seen and aliases.get(parts[0]) is not None:
        seen.add(parts[0])
        parts = [*str(aliases[parts[0]]).lstrip(":").split("::"), *parts[1:]]
    return "::".join(parts)


def namespace_alias(node: Any) -> tuple[str, str] | None:
    """The alias and target of a ``namespace_alias_definition`` node (``namespace n = ::a::b;`` -> ``("n",
    "::a::b")``), or None when it has no name or target."""
    name = node.child_by_field_name("name")
    target = next((x for x in node.named_children if x.type in ("namespace_identifier", "nested_namespace_specifier")
                   and x != name), None)
    if name is None or target is None:
        return None
    return name.text.decode(), "".join(target.text.decode().split())


@attrs.frozen(eq=False)
class StructDef:
    """A struct or class a followed header defines: its fields in declaration order (with their default member
    initializers), constructors, methods (static or not) and, for a class template, its template parameter list;
    ``bases`` is the base clause (``UnaryOp<Exp<A, Slot>, Slot>``)."""

    name: str
    node: Any  # the struct_specifier
    unit: Unit
    fields: tuple[tuple[str, str, Any], ...]  # (name, type name, default initializer node or None)
    ctors: tuple[Any, ...]  # function_definition nodes
    methods: dict[str, list[Any]]  # name -> function_definition nodes
    template_params: Any = None  # template_parameter_list node, or None
    bases: Any = None  # base_class_clause node, or None
    #: the user-declared members C++ runs with no call written (a destructor at the end of the object's scope, a
    #: copy or move constructor at every copy), each that may do something: a body with a statement, or declared
    #: here and defined elsewhere (``= default``, ``= delete`` and ``{}`` do nothing); by their text (``~Guard()``)
    lifecycle: tuple[tuple[str, Any], ...] = ()
    #: the member operators and conversion functions it declares (``operator++``, ``operator bool``): C++ calls them
    #: where an expression applies the operator or converts an object, with no call written
    operators: tuple[str, ...] = ()


def has_effect(fn: Any) -> bool:
    """Whether member ``fn`` (a definition or a declaration) may do something when C++ runs it: defined with a
    statement in its body, or declared only (its definition is elsewhere, not read); ``= default``, ``= delete``
    and an empty body do nothing."""
    if any(c.type in ("default_method_clause", "delete_method_clause") for c in fn.named_children):
        return False
    body = fn.child_by_field_name("body") if fn.type == "function_definition" else None
    if body is None:
        return True
    return any(c.type != "comment" for c in body.named_children)


def _display(path: Path, root: Path) -> str:
    """A followed header's name: relative to the kernel root, as the host names its kernel sources."""
    return Path(os.path.relpath(path.resolve(), root.resolve())).as_posix()


def read_kernel(source: Path, display: str, defines: dict[str, str], root: Path,
                include_dirs: tuple[Path, ...], compute: bool = False) -> Program:
    """Parse ``source`` (shown as ``display``) and the helper headers it includes under ``defines`` (and, for a
    ``compute`` kernel, the JIT's ``COMPUTE_JIT_MACROS``). Raises ``Refused`` for a file with no ``kernel_main``, a
    syntax error tree-sitter could not recover from in a part that is read, or a preprocessor construct
    ``preprocess`` refuses."""
    functions: dict[str, tuple[Any, Unit]] = {}
    globals_: list[tuple[Any, Unit]] = []
    tables = _Tables()
    seen: set[Path] = set()
    macros: Macros = {**DEVICE_MACROS, **host_macros(DEVICE_FUNCTION_MACROS), **KERNEL_JIT_MACROS,
                      **(COMPUTE_JIT_MACROS if compute else {}), **host_macros(defines)}

    reads: dict[Path, int] = {}

    def read(path: Path, name: str, depth: int, macros: Macros) -> tuple[Unit, Macros]:
        """Read ``path`` with ``macros`` in force: its includes are read where they stand (each with the macros in
        force at its line); returns its unit and the macros in force at its end."""
        seen.add(path.resolve())
        reads[path.resolve()] = reads.get(path.resolve(), 0) + 1
        text = path.read_text(encoding="utf-8", errors="replace")

        def include(inc: Include, now: Macros) -> Macros:
            # the op's helpers, quoted or (``<ttnn/operations/...>``) in angle brackets; not the device API's
            ours = inc.quoted or inc.name.startswith(OP_PREFIXES)
            # a quoted name GCC finds beside the including file first: a kernel's own "noc_helpers.h" is no device
            # API header, whatever its name (passed over, its definitions and #defines were missing)
            beside = inc.quoted and (path.parent / inc.name).is_file()
            if not beside and (inc.name.startswith(DEVICE_PREFIXES) or (not ours and inc.name in SYSTEM_HEADERS)):
                return now
            # beside the file, the host's include dirs, the kernel root and its parents (ttnn's kernels include
            # "ttnn/cpp/ttnn/kernel_lib/..." from the wheel's top as well as "ttnn/operations/..." from ttnn/cpp)
            for base in (path.parent, *include_dirs, root, *list(root.parents)[:3]):
                cand = base / inc.name
                if (why := not_regular(cand, "a header")) not in (None, "no such file") and not cand.is_dir():
                    # GCC would open it and block on a FIFO or read /dev/zero forever
                    raise Refused("#include not a regular file", SourceLoc(name, inc.line, 0, f"#include {inc.text()}"),
                                  f"{cand} {why}")
                if cand.is_file():
                    key = cand.resolve()
                    # a header without ``#pragma once`` is read again at each include (sfpu.inl: one part per
                    # includer's macro), a few times at most; one with it, once
                    if key in seen and (_once(key) or reads.get(key, 0) >= REREADS):
                        return now
                    if depth >= INCLUDE_DEPTH:
                        # passed over, its definitions and #defines would be missing as a header's not found
                        raise Refused("#include nested too deep",
                                      SourceLoc(name, inc.line, 0, f"#include {inc.text()}"),
                                      f"more than {INCLUDE_DEPTH} headers deep")
                    _, after = read(cand, _display(cand, root), depth + 1, now)
                    return after
            if inc.name in SFPI_HEADERS or _on_jit_path(inc.name, root):
                return now
            # GCC stops with a fatal error; passed over, the header's #defines would be missing from every #if after
            raise Refused("#include not found", SourceLoc(name, inc.line, 0, f"#include {inc.text()}"),
                          f"{inc.name} is not beside {Path(name).name}, in the host's include_dirs, under the kernel "
                          "root or on the JIT's include path")

        pre = preprocess(text, macros, name, include)
        unit = Unit(name, tuple(pre.text.split("\n")), _parser().parse(pre.text.encode()).root_node,
                    tuple(text.split("\n")))
        _includes_at_file_scope(unit, pre.includes)
        _collect(unit.root, unit, "", functions, globals_, tables)
        return unit, pre.macros

    main_unit, _ = read(source, display, 0, macros)
    for key in ("kernel_main", "MAIN"):
        defs = [x for x, u in tables.overloads.get(key, []) if u is main_unit]
        if len(defs) > 1:
            # C++ refuses a second definition; the reading would take the last one silently
            raise Refused(f"{key} defined twice", main_unit.loc(defs[1]), f"first at line {defs[0].start_point[0] + 1}")
        if key in functions and functions[key][1] is main_unit:
            return Program(functions[key][0], main_unit, functions, globals_, overloads=tables.overloads,
                           namespace_of=tables.namespace_of, declared=tables.declared, structs=tables.structs,
                           var_templates=tables.var_templates, enums=tables.enums, unscoped=_known(tables.unscoped),
                           **tables.aliases())
    entry = _TT_KERNEL.search(source.read_text(encoding="utf-8", errors="replace"))
    if entry is not None and entry.group(1) in functions and functions[entry.group(1)][1] is main_unit:
        return Program(functions[entry.group(1)][0], main_unit, functions, globals_, named_entry=True,
                       overloads=tables.overloads, namespace_of=tables.namespace_of, declared=tables.declared,
                       structs=tables.structs, var_templates=tables.var_templates, enums=tables.enums,
                       unscoped=_known(tables.unscoped), **tables.aliases())
    raise Refused("kernel without kernel_main", SourceLoc(display, 1, 0, ""))


def _on_jit_path(name: str, root: Path) -> bool:
    """Whether ``name`` resolves under one of the ``JIT_INCLUDE_DIRS`` of the tt-metal root above the kernel root
    ``root`` (an ancestor holding ``tt_metal/hw/inc``: a release's own, which alone decides, as its JIT's path does;
    headers move between releases), or of the pinned wheel when the kernels sit elsewhere (a user's, or a release
    whose device headers were not unpacked)."""
    tops = [d for d in (root, *root.parents) if (d / "tt_metal" / "hw" / "inc").is_dir()][:1]
    wheel = vendor.wheel_root()
    if wheel is not None and not tops:
        tops.append(wheel / "ttnn")
    return any((top / d / name).is_file() for top in tops for d in JIT_INCLUDE_DIRS)


#: nodes whose braces hold statements, members or elements: a header's text ``#include``d between them belongs there,
#: but a followed header is read as a unit of its own (its definitions, not its statements)
_BODY_NODES = frozenset({"compound_statement", "field_declaration_list", "initializer_list", "enumerator_list"})


def _includes_at_file_scope(unit: Unit, includes: tuple[Include, ...]) -> None:
    """Refuse an ``#include`` inside a function body, a class body, a braced initializer or an enum: the
    preprocessor pastes the header's text there (``cb_push_back(0, 1);`` from an included ``.inc`` is a statement
    of the loop it stands in), while the reading follows a header as a unit of its own and keeps only its
    definitions, so its statements were dropped and a double push was proved (until 2026-12-06).
    Namespaces and ``extern "C"`` blocks are file scope for this purpose."""
    for inc in includes:
        node = unit.root.descendant_for_point_range((inc.line - 1, 0), (inc.line - 1, 0))
        while node is not None and node.type not in _BODY_NODES:
            node = node.parent
        if node is not None:
            raise Refused("#include inside a body", SourceLoc(unit.file, inc.line, 0, f"#include {inc.name}"),
                          f"in a {node.type.replace('_', ' ')}: its text would be pasted there")


def _known(unscoped: dict[str, int | None]) -> dict[str, int]:
    return {k: v for k, v in unscoped.items() if v is not None}


#: the named-arg entry point's declaration: ``TT_KERNEL void NAME(``
_TT_KERNEL = re.compile(r"\bTT_KERNEL\s+void\s+(\w+)\s*\(")


@attrs.define
class _Tables:
    overloads: dict[str, list[tuple[Any, Unit]]] = attrs.field(factory=dict)
    namespace_of: dict[tuple[str, int], str] = attrs.field(factory=dict)
    declared: dict[str, tuple[Any, Unit]] = attrs.field(factory=dict)
    structs: dict[str, StructDef] = attrs.field(factory=dict)
    var_templates: dict[str, tuple[Any, Any, Unit]] = attrs.field(factory=dict)
    enums: dict[str, dict[str, int]] = attrs.field(factory=dict)
    unscoped: dict[str, int | None] = attrs.field(factory=dict)
    namespace_aliases: dict[str, str | None] = attrs.field(factory=dict)
    #: the bare names of the namespaces defined
    namespaces: set[str] = attrs.field(factory=set)
    #: their full names
    namespace_paths: set[str] = attrs.field(factory=set)

    def aliases(self) -> dict[str, Any]:
        """``Program``'s fields of namespace names: ``namespace_aliases`` (an alias that is also the name of another
        namespace made None: ``alias_clashes``), ``namespaces`` and ``namespace_paths``."""
        paths = frozenset(self.namespace_paths)
        return {"namespace_aliases": {k: None if v is None or alias_clashes(k, v, self.namespace_aliases, paths) else v
                                      for k, v in self.namespace_aliases.items()},
                "namespaces": frozenset(self.namespaces), "namespace_paths": paths}


def _enum(spec: Any, tables: _Tables) -> None:
    """An enum definition: its enumerators' values, as C++ gives them (the first 0 unless initialised, each next
    one more than the one before). An initializer that is not an integer constant expression of numbers and earlier
    enumerators (``+ - * << >> | & ~``, parentheses, casts) ends what is known of the enum: it and the enumerators
    after it are left out. An unscoped enumerator (``enum``, not ``enum class``) is also usable by its bare name; a
    name two enums give different values is left out of those."""
    name_node = spec.child_by_field_name("name")
    body = spec.child_by_field_name("body")
    if body is None:
        return
    if name_node is not None and (name_node.is_missing or not name_node.text):
        name_node = None  # an anonymous enum (``enum : uint32_t { A, END };``): its enumerators by bare name only
    scoped = any(c.type in ("class", "struct") for c in spec.children)
    values: dict[str, int] = {}
    nxt: int | None = 0
    for e in body.named_children:
        if e.type != "enumerator" or nxt is None:
            continue
        ename = e.child_by_field_name("name").text.decode()
        init = e.child_by_field_name("value")
        v = _const_int(init, values) if init is not None else nxt
        if v is None:
            nxt = None
            continue
        values[ename] = v
        nxt = v + 1
    if name_node is not None:
        key = name_node.text.decode().rsplit("::", 1)[-1]
        # two enums of one bare name (in two namespaces) that differ: neither is known
        tables.enums[key] = values if tables.enums.get(key, values) == values else {}
    if not scoped:
        for k, v in values.items():
            tables.unscoped[k] = v if tables.unscoped.get(k, v) == v else None


def _const_int(n: Any, known: dict[str, int]) -> int | None:
    """The value of an integer constant expression of numbers and the names in ``known``, or None."""
    t = n.type
    if t == "number_literal":
        try:
            return int(n.text.decode().rstrip("uUlL").replace("'", ""), 0)
        except ValueError:
            return None
    if t == "identifier":
        return known.get(n.text.decode())
    if t == "parenthesized_expression" and n.named_child_count == 1:
        return _const_int(n.named_children[0], known)
    if t == "cast_expression":
        return _const_int(n.child_by_field_name("value"), known)
    if t == "unary_expression":
        a = _const_int(n.child_by_field_name("argument"), known)
        op = n.child_by_field_name("operator").type
        return None if a is None else -a if op == "-" else ~a if op == "~" else a if op == "+" else None
    if t == "binary_expression":
        a = _const_int(n.child_by_field_name("left"), known)
        b = _const_int(n.child_by_field_name("right"), known)
        op = n.child_by_field_name("operator").type
        if a is None or b is None:
            return None
        ops = {"+": a + b, "-": a - b, "*": a * b, "|": a | b, "&": a & b, "^": a ^ b}
        if op in ops:
            return ops[op]
        if op in ("<<", ">>") and 0 <= b < 64:
            return a << b if op == "<<" else a >> b
    return None


def _collect(node: Any, unit: Unit, ns: str, functions: dict[str, tuple[Any, Unit]],
             globals_: list[tuple[Any, Unit]], tables: _Tables | None = None) -> None:
    tables = tables if tables is not None else _Tables()
    for c in node.named_children:
        t = c.type
        alias = next((x for x in c.named_children if x.type == "alias_declaration"), None) \
            if t == "template_declaration" else None
        if alias is not None:
            # ``template <uint32_t N> using Coords = Coord[N];`` (layernorm_dataflow_utils.h:31-32): an alias template
            # of an array type, read with the file's other aliases (``KernelReader.array_aliases``); other alias
            # templates are not read (as before)
            target = alias.child_by_field_name("type")
            arr = target.child_by_field_name("declarator") if target is not None else None
            if arr is not None and arr.type == "abstract_array_declarator":
                globals_.append((alias, unit))
            continue
        if t in ("function_definition", "template_declaration"):
            inner = c if t == "function_definition" else next(
                (x for x in c.named_children if x.type in ("function_definition", "struct_specifier",
                                                           "class_specifier", "declaration")), None)
            if inner is not None and inner.type in ("struct_specifier", "class_specifier"):
                _struct(inner, c if t == "template_declaration" else None, unit, ns, tables)
                continue
            if inner is not None and inner.type == "declaration":
                d = inner.child_by_field_name("declarator")
                if d is not None and d.type == "init_declarator":
                    name_node = d.child_by_field_name("declarator")
                    if name_node is not None and name_node.type == "identifier":
                        tables.var_templates[name_node.text.decode()] = (
                            c.child_by_field_name("parameters"), d.child_by_field_name("value"), unit)
                    continue
                _declared(inner, c, unit, ns, tables)
                continue
            fn = inner
            name = _function_name(fn) if fn is not None else ""
            if name:
                # by name (the last definition) and by name and arity, which tells overloads apart
                # (noc_async_read_sharded(noc, ...) calling its 5-argument sibling in data_movement/common)
                for key in (name, f"{name}/{_arity(fn)}"):
                    functions[key] = (c, unit)
                    if ns:
                        functions[f"{ns}::{key}"] = (c, unit)
                same = tables.overloads.setdefault(name, [])
                if not any(u.file == unit.file and x.start_point == c.start_point for x, u in same):
                    same.append((c, unit))  # a header read again defines it again: one overload
                    tables.namespace_of[(unit.file, c.start_byte)] = ns
        elif t == "namespace_definition":
            name = c.child_by_field_name("name")
            body = c.child_by_field_name("body")
            if name is not None:
                tables.namespaces.update(name.text.decode().split("::"))  # ``namespace a::b {``
                outer = ns
                for part in "".join(name.text.decode().split()).split("::"):
                    outer = f"{outer}::{part}" if outer else part
                    tables.namespace_paths.add(outer)
            if body is not None:
                inner_ns = f"{ns}::{name.text.decode()}" if ns and name is not None else (
                    name.text.decode() if name is not None else ns)
                _collect(body, unit, inner_ns, functions, globals_, tables)
        elif t in ("struct_specifier", "class_specifier"):
            _struct(c, None, unit, ns, tables)
        elif t == "enum_specifier":
            _enum(c, tables)
        elif t in ("declaration", "alias_declaration", "type_definition"):
            if t == "declaration":
                _declared(c, c, unit, ns, tables)
                spec = c.child_by_field_name("type")
                if spec is not None and spec.type in ("struct_specifier", "class_specifier"):
                    _struct(spec, None, unit, ns, tables)
                if spec is not None and spec.type == "enum_specifier":
                    _enum(spec, tables)
            globals_.append((c, unit))
            tables.namespace_of[(unit.file, c.start_byte)] = ns
        elif t == "namespace_alias_definition":
            got = namespace_alias(c)
            if got is not None:
                add_namespace_alias(tables.namespace_aliases, *got)
        elif t == "static_assert_declaration":
            globals_.append((c, unit))  # checked where it stands among the file-scope declarations
        elif t == "linkage_specification":
            body = c.child_by_field_name("body")
            if body is not None:
                _collect(body, unit, ns, functions, globals_, tables)


def _declared(decl: Any, outer: Any, unit: Unit, ns: str, tables: _Tables) -> None:
    """A function's forward declaration: its parameter list, whose defaults the definition may not repeat."""
    d = function_declarator(decl)
    if d is None or d.child_by_field_name("declarator") is None:
        return
    name = d.child_by_field_name("declarator").text.decode().rsplit("::", 1)[-1]
    plist = d.child_by_field_name("parameters")
    if plist is None:
        return
    arity = sum(1 for p in plist.named_children if p.type.endswith("parameter_declaration"))
    if any(p.type == "optional_parameter_declaration" for p in plist.named_children):
        tables.declared.setdefault(f"{name}/{arity}", (plist, unit))
    tplist = outer.child_by_field_name("parameters") if outer.type == "template_declaration" else None
    if tplist is not None and any(p.type.startswith("optional_") for p in tplist.named_children):
        # default template arguments the definition does not repeat (tilize_helpers.hpp's ``wait_mode =
        # WaitMode::WaitBlock``, defined in tilize_helpers.inl:57 without it)
        tables.declared.setdefault(f"template {name}/{arity}", (tplist, unit))


def _struct(spec: Any, template: Any, unit: Unit, ns: str, tables: _Tables, outer: str = "") -> None:
    """A struct or class definition (or a class template's forward declaration, for its default template
    arguments: kernel_lib/eltwise/unary/misc.hpp:46 declares ``template <..., Dst Slot = Dst::D0> struct Typecast;``
    and misc.inl defines it without the default)."""
    name_node = spec.child_by_field_name("name")
    if name_node is not None and name_node.type == "template_type":
        # a specialization (``template <> struct is_accumulate<Accumulate> : std::true_type {};``): by its name
        # with the arguments' last components, ``is_accumulate<Accumulate>``
        args = name_node.child_by_field_name("arguments")
        key = "".join(name_node.child_by_field_name("name").text.decode().split()) + "<" + ",".join(
            "".join(a.text.decode().split()).rsplit("::", 1)[-1] for a in args.named_children) + ">" \
            if args is not None else ""
        if key:
            tables.structs[key] = StructDef(key, spec, unit, (), (), {}, None, next(
                (x for x in spec.named_children if x.type == "base_class_clause"), None))
        return
    if name_node is None or name_node.type not in ("type_identifier",):
        return  # an anonymous struct: not a value type
    name = f"{outer}::{name_node.text.decode()}" if outer else name_node.text.decode()
    body = spec.child_by_field_name("body")
    plist = template.child_by_field_name("parameters") if template is not None else None
    if body is None:
        if plist is not None:
            tables.declared.setdefault(f"struct {name}", (plist, unit))
        return
    fields: list[tuple[str, str, Any]] = []
    ctors: list[Any] = []
    methods: dict[str, list[Any]] = {}
    lifecycle: list[tuple[str, Any]] = []
    operators: list[str] = []
    bare = name.rsplit("::", 1)[-1]
    for m in body.named_children:
        if m.type == "field_declaration":
            fname = _function_name(m)
            if fname.startswith("operator") or any(x.type == "operator_cast" for x in m.named_children):
                # a member operator declared here and defined elsewhere (``X& operator=(const X&);``)
                operators.append(fname or "operator (conversion)")
                continue
            if fname == bare and _copies(m, bare) and has_effect(m):
                lifecycle.append((m.text.decode().rstrip(";").strip(), m))
            if any(x.type == "storage_class_specifier" and x.text == b"static" for x in m.children):
                continue  # a static data member is not part of the value
            typ = m.child_by_field_name("type")
            if typ is not None and typ.type in ("struct_specifier", "class_specifier") and \
                    typ.child_by_field_name("body") is not None:
                # a nested class (blocked_range.h:25-87's ``BlockedRange::Block::Iterator``): named by its outer
                # classes only, so two nested ``Iterator``s stay apart (objects.struct_of finds it from inside)
                _struct(typ, None, unit, "", tables, name)
            tname = _member_type(typ, name, tables) if typ is not None else ""
            for d in m.children_by_field_name("declarator"):
                if d.type == "field_identifier":
                    fields.append((d.text.decode(), tname, m.child_by_field_name("default_value")))
                elif d.type in ("array_declarator", "pointer_declarator", "reference_declarator"):
                    inner = d
                    while inner is not None and inner.type != "field_identifier":
                        inner = inner.child_by_field_name("declarator")
                    if inner is not None:
                        fields.append((inner.text.decode(), "", None))
        elif m.type in ("function_definition", "template_declaration", "declaration"):
            fn = m if m.type != "template_declaration" else next(
                (x for x in m.named_children if x.type in ("function_definition", "declaration")), None)
            if fn is None:
                continue
            fname = _function_name(fn)
            cast = next((x for x in fn.named_children if x.type == "operator_cast"), None)
            if cast is not None:
                operators.append(" ".join(cast.text.decode().split("(", 1)[0].split()))
            elif fname.startswith("operator"):
                operators.append(fname)
            if fname.startswith("~") and has_effect(fn):
                lifecycle.append((fn.text.decode().split("{", 1)[0].strip(), fn))
            if fname == bare and _copies(fn, bare) and has_effect(fn):
                lifecycle.append((fn.text.decode().split("{", 1)[0].split(":", 1)[0].strip(), fn))
            if fname == bare:
                ctors.append(fn)
            elif fname and fn.type == "function_definition":
                methods.setdefault(fname, []).append(m)
    sd = StructDef(name, spec, unit, tuple(fields), tuple(ctors), methods, plist,
                   next((x for x in spec.named_children if x.type == "base_class_clause"), None),
                   tuple(lifecycle), tuple(operators))
    for key in (name, f"{ns}::{name}" if ns and not outer else ""):
        if key:
            tables.structs[key] = sd


def nested_key(structs: dict[str, StructDef], text: str) -> str | None:
    """The key of the nested class a qualified type name ``text`` names (``O::I``, ``ns::O::I``, ``O::I<int>``), or
    None: a nested class is kept under its outer classes' names only (``_struct``), which the last component alone
    (``I``) never finds."""
    parts = "".join(text.split()).split("<", 1)[0].lstrip(":").split("::")
    for i in range(len(parts) - 1):
        key = "::".join(parts[i:])
        if key in structs and structs[key].name == key:
            return key
    return None


def _member_type(typ: Any, owner: str, tables: _Tables) -> str:
    """The type name a data member of class ``owner`` is kept with: a class nested in ``owner`` or an enclosing
    class by its key (``O::I``, as C++'s class scope lookup finds ``I`` there), a nested class named qualified
    (``O::I``) by its key, otherwise the last component without template arguments (``W<uint8_t>`` is ``W``)."""
    if typ.type in ("struct_specifier", "class_specifier") and typ.child_by_field_name("body") is not None:
        named = typ.child_by_field_name("name")  # ``struct I { ... } i;``: defined with the member
        return f"{owner}::{named.text.decode()}" if named is not None and named.type == "type_identifier" else ""
    text = "".join(typ.text.decode().split()).split("<", 1)[0]
    if "::" in text.lstrip(":"):
        return nested_key(tables.structs, text) or text.rsplit("::", 1)[-1]
    scope = owner
    while scope:
        if f"{scope}::{text}" in tables.structs:
            return f"{scope}::{text}"
        scope = scope.rsplit("::", 1)[0] if "::" in scope else ""
    return text


def _copies(fn: Any, bare: str) -> bool:
    """Whether constructor ``fn`` of class ``bare`` is a copy or move constructor: its one parameter (with no
    default) a reference to the class (``X(const X&)``, ``X(X&&)``)."""
    d = function_declarator(fn)
    params = d.child_by_field_name("parameters") if d is not None else None
    ps = [p for p in params.named_children if p.type.endswith("parameter_declaration")] if params is not None else []
    if len(ps) != 1 or ps[0].type != "parameter_declaration":
        return False
    typ = ps[0].child_by_field_name("type")
    decl = ps[0].child_by_field_name("declarator")
    named = typ is not None and typ.text.decode().rsplit("::", 1)[-1].split("<", 1)[0] == bare
    return named and decl is not None and "reference_declarator" in decl.type


def _arity(fn: Any) -> int:
    d = function_declarator(fn)
    params = d.child_by_field_name("parameters") if d is not None else None
    return sum(1 for p in params.named_children if p.type.endswith("parameter_declaration")) if params else 0


def function_declarator(node: Any) -> Any:
    """The ``function_declarator`` inside a definition's or declaration's declarator, through the pointer and
    reference declarators of its return type (``Iterator& operator++()``, whose ``reference_declarator`` holds it as
    an unnamed child); None if there is none."""
    d = node.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        nxt = d.child_by_field_name("declarator")
        if nxt is None and d.type == "reference_declarator":
            nxt = next((c for c in d.named_children if c.type.endswith("declarator")), None)
        d = nxt
    return d


def _function_name(fn: Any) -> str:
    d = function_declarator(fn)
    if d is None:
        return ""
    n = d.child_by_field_name("declarator")
    if n is None:
        return ""
    text: str = n.text.decode()
    return text.rsplit("::", 1)[-1] if "::" in text and not text.startswith("operator") else text
