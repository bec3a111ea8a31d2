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

from verispatial.frontends.ttmetal.preprocess import preprocess
from verispatial.frontends.ttmetal.refusals import Refused
from verispatial.ir.source import SourceLoc

#: include prefixes of the device API: modelled by name, never read
DEVICE_PREFIXES = ("api/", "tt_metal/", "hostdevcommon/", "debug/", "internal/", "compute_kernel_api", "dataflow_api",
                   "llk_", "ckernel", "risc_", "noc_", "firmware", "tools/profiler", "tt-metalium/")

#: include prefixes of ttnn's own helper headers, followed also when included with angle brackets
OP_PREFIXES = ("ttnn/",)

#: Attribute macros of the device headers (tt_metal/hw/inc/...: ``tt_l1_ptr`` is ``__attribute__((rvtt_l1_ptr))``,
#: ``FORCE_INLINE`` is ``inline __attribute__((always_inline))``): they qualify, they do not compute.
DEVICE_MACROS = {"tt_l1_ptr": "", "tt_reg_ptr": "", "FORCE_INLINE": "inline", "ALWI": "inline",
                 "ALWAYS_INLINE": "inline", "NOINLINE": "", "TT_KERNEL": "static inline"}
#: Constants of the device headers: what kernels compare semaphores with (hostdevcommon/common_values.hpp) and the
#: tile geometry (tt_metal/api/tt-metalium/constants.hpp, ``tt::constants``; named with or without the namespace).
DEVICE_CONSTANTS = {"VALID": 1, "INVALID": 0, "TILE_HEIGHT": 32, "TILE_WIDTH": 32, "TILE_HW": 1024,
                    "FACE_HEIGHT": 16, "FACE_WIDTH": 16, "FACE_HW": 256}
#: namespaces a device constant is named from
CONSTANT_NAMESPACES = frozenset({"constants", "tt::constants", "tt::tt_metal::constants"})
#: ``sizeof`` of the fixed-width and built-in types kernels take sizes of (RISC-V ILP32: int, long and pointers are
#: 4 bytes, the GCC toolchain of tt_metal/hw)
TYPE_SIZES = {"uint8_t": 1, "int8_t": 1, "char": 1, "bool": 1, "uint16_t": 2, "int16_t": 2, "uint32_t": 4,
              "int32_t": 4, "int": 4, "uint": 4, "unsigned": 4, "float": 4, "uint64_t": 8, "int64_t": 8,
              "double": 8}

#: how deep #includes are followed (helpers include helpers; a cycle is cut by the seen set)
INCLUDE_DEPTH = 8


@functools.cache
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_cpp

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cpp.language()))


@attrs.frozen(eq=False)
class Unit:
    """One read file: its display name, source lines (after preprocessing) and tree."""

    file: str
    lines: tuple[str, ...]
    root: Any

    def loc(self, node: Any) -> SourceLoc:
        row, col = node.start_point
        text = self.lines[row].strip() if row < len(self.lines) else ""
        return SourceLoc(self.file, row + 1, col + 1, text[:200])


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


def _display(path: Path, root: Path) -> str:
    """A followed header's name: relative to the kernel root, as the host names its kernel sources."""
    return Path(os.path.relpath(path.resolve(), root.resolve())).as_posix()


def read_kernel(source: Path, display: str, defines: dict[str, str], root: Path,
                include_dirs: tuple[Path, ...]) -> Program:
    """Parse ``source`` (shown as ``display``) and the helper headers it includes under ``defines``. Raises
    ``Refused`` for a file with no ``kernel_main``, a syntax error tree-sitter could not recover from in a part
    that is read, or a preprocessor construct ``preprocess`` refuses."""
    functions: dict[str, tuple[Any, Unit]] = {}
    globals_: list[tuple[Any, Unit]] = []
    seen: set[Path] = set()
    macros = {**DEVICE_MACROS, **defines}

    def read(path: Path, name: str, depth: int) -> Unit:
        nonlocal macros
        seen.add(path.resolve())
        text = path.read_text(encoding="utf-8", errors="replace")
        pre = preprocess(text, macros, name)
        macros = {**macros, **pre.macros}
        for inc in pre.includes:
            # the op's helpers, quoted or (``<ttnn/operations/...>``) in angle brackets; not the device API's
            ours = inc.quoted or inc.name.startswith(OP_PREFIXES)
            if not ours or inc.name.startswith(DEVICE_PREFIXES) or depth >= INCLUDE_DEPTH:
                continue
            # beside the file, the host's include dirs, the kernel root and its parents (ttnn's kernels include
            # "ttnn/cpp/ttnn/kernel_lib/..." from the wheel's top as well as "ttnn/operations/..." from ttnn/cpp)
            for base in (path.parent, *include_dirs, root, *list(root.parents)[:3]):
                cand = base / inc.name
                if cand.is_file() and cand.resolve() not in seen:
                    read(cand, _display(cand, root), depth + 1)
                    break
        unit = Unit(name, tuple(pre.text.split("\n")), _parser().parse(pre.text.encode()).root_node)
        _collect(unit.root, unit, "", functions, globals_)
        return unit

    main_unit = read(source, display, 0)
    for key in ("kernel_main", "MAIN"):
        if key in functions and functions[key][1] is main_unit:
            return Program(functions[key][0], main_unit, functions, globals_)
    entry = _TT_KERNEL.search(source.read_text(encoding="utf-8", errors="replace"))
    if entry is not None and entry.group(1) in functions and functions[entry.group(1)][1] is main_unit:
        return Program(functions[entry.group(1)][0], main_unit, functions, globals_, named_entry=True)
    raise Refused("kernel without kernel_main", SourceLoc(display, 1, 0, ""))


#: the named-arg entry point's declaration: ``TT_KERNEL void NAME(``
_TT_KERNEL = re.compile(r"\bTT_KERNEL\s+void\s+(\w+)\s*\(")


def _collect(node: Any, unit: Unit, ns: str, functions: dict[str, tuple[Any, Unit]],
             globals_: list[tuple[Any, Unit]]) -> None:
    for c in node.named_children:
        t = c.type
        if t in ("function_definition", "template_declaration"):
            fn = c if t == "function_definition" else next(
                (x for x in c.named_children if x.type == "function_definition"), None)
            name = _function_name(fn) if fn is not None else ""
            if name:
                # by name (the last definition) and by name and arity, which tells overloads apart
                # (noc_async_read_sharded(noc, ...) calling its 5-argument sibling in data_movement/common)
                for key in (name, f"{name}/{_arity(fn)}"):
                    functions[key] = (c, unit)
                    if ns:
                        functions[f"{ns}::{key}"] = (c, unit)
        elif t == "namespace_definition":
            name = c.child_by_field_name("name")
            body = c.child_by_field_name("body")
            if body is not None:
                inner_ns = f"{ns}::{name.text.decode()}" if ns and name is not None else (
                    name.text.decode() if name is not None else ns)
                _collect(body, unit, inner_ns, functions, globals_)
        elif t in ("declaration", "alias_declaration", "type_definition"):
            globals_.append((c, unit))
        elif t == "linkage_specification":
            body = c.child_by_field_name("body")
            if body is not None:
                _collect(body, unit, ns, functions, globals_)


def _arity(fn: Any) -> int:
    d = fn.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator")
    params = d.child_by_field_name("parameters") if d is not None else None
    return sum(1 for p in params.named_children if p.type.endswith("parameter_declaration")) if params else 0


def _function_name(fn: Any) -> str:
    d = fn.child_by_field_name("declarator")
    while d is not None and d.type not in ("function_declarator",):
        d = d.child_by_field_name("declarator")
    if d is None:
        return ""
    n = d.child_by_field_name("declarator")
    if n is None:
        return ""
    text: str = n.text.decode()
    return text.rsplit("::", 1)[-1] if "::" in text and not text.startswith("operator") else text
