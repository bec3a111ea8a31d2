"""The C preprocessor, as far as kernels need it: ``#if``/``#ifdef``/``#elif``/``#else``/``#endif`` decided from the
host's defines and the file's own ``#define``s, object-like macros substituted, ``#include``s listed.

Every line keeps its number (directives and lines of untaken branches become empty), so an op read from the result
is located at the line the engineer wrote. Function-like macros are left in place: a call to one is then refused
by name when it is read.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable

import attrs

from verispatial.frontends.ttmetal.refusals import Refused
from verispatial.ir.source import SourceLoc

_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)\s*(.*)$")
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
_DEFINED = re.compile(r"\bdefined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*))")


@attrs.frozen
class Include:
    """An ``#include`` of the file: ``quoted`` for ``"..."`` (searched beside the file), else ``<...>``."""

    name: str
    quoted: bool
    line: int


@attrs.frozen
class Preprocessed:
    text: str
    includes: tuple[Include, ...]
    #: object-like macros in force at the end of the file (an included header's reach the includer)
    macros: dict[str, str]


def _strip_comment(s: str) -> str:
    return re.sub(r"/\*.*?\*/", " ", s.split("//", 1)[0])


def _expand(text: str, macros: dict[str, str], depth: int = 0) -> str:
    if depth > 8:
        return text
    out = _IDENT.sub(lambda m: macros.get(m[0], m[0]) if m[0] in macros else m[0], text)
    return out if out == text else _expand(out, macros, depth + 1)


def _cond(expr: str, macros: dict[str, str], file: str, line: int) -> bool:
    """Evaluate a ``#if`` expression: ``defined``, integers, ``! && || == != < <= > >= + - * /`` and parentheses;
    an identifier no macro names is 0 (as in C)."""
    expr = _strip_comment(expr)
    written = expr.strip()  # what a refusal quotes: the line as the engineer wrote it, not its expansion
    # ``defined`` is decided before expansion, also where a macro expands to ``defined X`` (PRE_SCALE in
    # eltwise_binary_kernel.cpp): one level of expansion at a time, so the operand of a ``defined`` that an expansion
    # brings in is decided, not expanded.
    for _ in range(9):
        expr = _DEFINED.sub(lambda m: "1" if (m[1] or m[2]) in macros else "0", expr)
        once = _IDENT.sub(lambda m: macros.get(m[0], m[0]), expr)
        if once == expr:
            break
        expr = once
    expr = re.sub(r"(\d+)[uUlL]+\b", r"\1", expr)
    expr = re.sub(r"\bnot\b", "!", expr)
    expr = re.sub(r"\band\b", "&&", expr)
    expr = re.sub(r"\bor\b", "||", expr)
    expr = _IDENT.sub("0", expr)
    py = expr.replace("&&", " and ").replace("||", " or ").replace("/", "//")
    py = re.sub(r"!(?!=)", " not ", py)
    if not re.fullmatch(r"[\d\s()+\-*/<>=!%andortx]*", py):
        raise Refused("#if expression", SourceLoc(file, line, 0, f"#if {written}"))
    if re.search(r"\d\s*\(", py):  # a function-like macro not defined here (``HAS_ACTIVATIONS(LHS)`` became ``0(0)``)
        raise Refused("#if expression", SourceLoc(file, line, 0, f"#if {written}"), "a function-like macro")
    try:
        with warnings.catch_warnings():  # Python's warnings about the text are not the user's business: it refuses
            warnings.simplefilter("ignore")
            return bool(eval(py, {"__builtins__": {}}, {}))  # only digits, operators and and/or/not reach here
    except Exception:
        raise Refused("#if expression", SourceLoc(file, line, 0, f"#if {written}")) from None


def preprocess(text: str, defines: dict[str, str], file: str,
               on_include: Callable[[Include, dict[str, str]], dict[str, str]] | None = None) -> Preprocessed:
    """``text`` with its conditionals decided under ``defines`` (the host's; the file's own ``#define``s are added
    as they are read) and object-like macros substituted. ``on_include`` is called at each ``#include`` in a taken
    branch with the macros in force there and returns those in force after it (the header's own ``#define``s and
    ``#undef``s): kernel_lib/eltwise/binary/sfpu/basic.inl defines ``CKL_ELTWISE_BINARY_SFPU_BASIC``, includes
    sfpu.inl, which defines its structs only under that macro, and undefines it. Raises ``Refused`` for an ``#if`` it
    cannot evaluate or an unbalanced ``#endif``."""
    macros = dict(defines)
    lines = text.split("\n")
    out: list[str] = []
    includes: list[Include] = []
    # one entry per open #if: (this group taken, some group of it already taken, enclosing groups all taken)
    stack: list[tuple[bool, bool, bool]] = []
    active = True
    i = 0
    while i < len(lines):
        line = lines[i]
        n = i + 1
        # a directive continued with backslashes is one logical line
        joined = line
        extra = 0
        while joined.endswith("\\") and i + extra + 1 < len(lines):
            extra += 1
            joined = joined[:-1] + " " + lines[i + extra]
        m = _DIRECTIVE.match(joined)
        if m is None:
            out.append(_expand(line, macros) if active else "")
            i += 1
            continue
        out.extend([""] * (extra + 1))
        i += extra + 1
        kw, rest = m[1], m[2]
        if kw in ("if", "ifdef", "ifndef"):
            if not active:
                stack.append((False, True, False))
                continue
            if kw == "if":
                taken = _cond(rest, macros, file, n)
            else:
                name = _strip_comment(rest).strip()
                taken = (name in macros) == (kw == "ifdef")
            stack.append((taken, taken, True))
            active = taken
        elif kw in ("elif", "else"):
            if not stack:
                raise Refused(f"#{kw} without #if", SourceLoc(file, n, 0, joined.strip()))
            _, done, outer = stack[-1]
            taken = outer and not done and (kw == "else" or _cond(rest, macros, file, n))
            stack[-1] = (taken, done or taken, outer)
            active = taken
        elif kw == "endif":
            if not stack:
                raise Refused("#endif without #if", SourceLoc(file, n, 0, joined.strip()))
            stack.pop()
            active = all(t for t, _, _ in stack)
        elif not active:
            continue
        elif kw == "define":
            dm = re.match(r"([A-Za-z_]\w*)(\(?)\s*(.*)$", rest)
            if dm and not dm[2]:
                macros[dm[1]] = _strip_comment(dm[3]).strip()
        elif kw == "undef":
            macros.pop(rest.strip(), None)
        elif kw == "include":
            im = re.match(r'\s*(?:"([^"]+)"|<([^>]+)>)', rest)
            if im:
                inc = Include(im[1] or im[2], im[1] is not None, n)
                includes.append(inc)
                if on_include is not None:
                    macros = dict(on_include(inc, macros))
        # #pragma, #error in an untaken branch, #line: nothing a choreography depends on
    if stack:
        raise Refused("#if without #endif", SourceLoc(file, len(lines), 0, ""))
    return Preprocessed("\n".join(out), tuple(includes), macros)
