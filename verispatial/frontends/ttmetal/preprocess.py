"""The C preprocessor, as far as kernels need it: ``#if``/``#ifdef``/``#elif``/``#else``/``#endif`` decided from the
host's defines and the file's own ``#define``s, object-like and function-like macros expanded (``macros.py``: ``#``,
``##``, ``__VA_ARGS__``, rescanning, as GCC does), ``#include``s listed.

Every line keeps its number (directives and lines of untaken branches become empty; a macro invocation whose
arguments run over several lines is expanded on its first line and the others left empty), so an op read from the
result is located at the line the engineer wrote.
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable

import attrs

from verispatial.frontends.ttmetal.macros import (
    ArgCount,
    Expander,
    Incomplete,
    Macro,
    Macros,
    Tok,
    TooDeep,
    lines_of,
    tokenize,
)
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
    #: macros in force at the end of the file (an included header's reach the includer)
    macros: Macros


def _strip_comment(s: str) -> str:
    return re.sub(r"/\*.*?\*/", " ", s.split("//", 1)[0])


def _expand_tokens(toks: list[Tok], macros: Macros, final: bool, loc: SourceLoc, in_if: bool = False) -> list[Tok]:
    try:
        return Expander(macros, in_if=in_if).expand(toks, final)
    except TooDeep:
        raise Refused("macro expansion that does not end", loc) from None
    except ArgCount as e:
        raise Refused("macro invoked with the wrong number of arguments", loc, str(e)) from None


def _defined(toks: list[Tok], macros: Macros) -> list[Tok]:
    """``defined X`` / ``defined(X)`` replaced by 1 or 0."""
    out: list[Tok] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "id" and t.text == "defined":
            j = i + 1
            paren = j < len(toks) and toks[j].text == "("
            j += paren
            if j < len(toks) and toks[j].kind == "id" and (not paren or (j + 1 < len(toks) and toks[j + 1].text == ")")):
                out.append(Tok("1" if toks[j].text in macros else "0", "num", space=t.space))
                i = j + 1 + paren
                continue
        out.append(t)
        i += 1
    return out


#: C++'s operator words (and ``true`` / ``false``): not names in a ``#if``
_OPERATOR_WORDS = frozenset({"true", "false", "not", "and", "or"})


def _cond(expr: str, macros: Macros, file: str, line: int) -> bool:
    """Evaluate a ``#if`` expression: ``defined``, macros expanded (function-like ones too), integers,
    ``! && || == != < <= > >= + - * / %`` and parentheses; an identifier no macro names is 0 (as in C), one followed
    by ``(`` (a function-like macro not defined) is refused."""
    written = _strip_comment(expr).strip()  # what a refusal quotes: the line as the engineer wrote it
    loc = SourceLoc(file, line, 0, f"#if {written}")
    toks = [t for t in tokenize(expr, line)[0] if t.kind != "comment"]
    # ``defined`` is decided before expansion, and again where a macro expands to ``defined X`` (PRE_SCALE in
    # eltwise_binary_kernel.cpp), as GCC does
    toks = _defined(_expand_tokens(_defined(toks, macros), macros, True, loc, in_if=True), macros)
    for a, b in itertools.pairwise(toks):
        if a.kind == "id" and a.text not in _OPERATOR_WORDS and b.text == "(":
            # a function-like macro not defined here (``HAS_ACTIVATIONS(LHS)`` with no definition): GCC's error
            raise Refused("#if expression", loc, "a function-like macro")
    expr = " ".join("1" if t.text == "true" else "0" if t.kind == "id" and t.text not in ("not", "and", "or")
                    else t.text for t in toks)
    expr = re.sub(r"(\d+)[uUlL]+\b", r"\1", expr)
    expr = re.sub(r"\bnot\b", "!", expr)
    expr = re.sub(r"\band\b", "&&", expr)
    expr = re.sub(r"\bor\b", "||", expr)
    py = expr.replace("&&", " and ").replace("||", " or ").replace("/", "//")
    py = re.sub(r"!(?!=)", " not ", py)
    if not re.fullmatch(r"[\d\s()+\-*/<>=!%andortx]*", py):
        raise Refused("#if expression", loc)
    try:
        with warnings.catch_warnings():  # Python's warnings about the text are not the user's business: it refuses
            warnings.simplefilter("ignore")
            return bool(eval(py, {"__builtins__": {}}, {}))  # only digits, operators and and/or/not reach here
    except Exception:
        raise Refused("#if expression", loc) from None


def host_macros(defines: dict[str, str]) -> Macros:
    """The macro table of a build's ``-D`` defines: ``NAME: value`` object-like, ``"NAME(i)": value`` function-like
    (the JIT's ``-D'PROCESS_LHS_ACTIVATIONS(i)=...'``)."""
    out: Macros = {}
    for k, v in defines.items():
        parsed = Macro.parse(k, str(v)) if "(" in k else None
        if parsed is not None:
            out[parsed[0]] = parsed[1]
        else:
            out[k] = v
    return out


def preprocess(text: str, defines: Macros, file: str,
               on_include: Callable[[Include, Macros], Macros] | None = None) -> Preprocessed:
    """``text`` with its conditionals decided under ``defines`` (the host's, ``host_macros``; the file's own
    ``#define``s are added as they are read) and macros expanded. ``on_include`` is called at each ``#include`` in a
    taken branch with the macros in force there and returns those in force after it (the header's own ``#define``s
    and ``#undef``s): kernel_lib/eltwise/binary/sfpu/basic.inl defines ``CKL_ELTWISE_BINARY_SFPU_BASIC``, includes
    sfpu.inl, which defines its structs only under that macro, and undefines it. Raises ``Refused`` for an ``#if`` it
    cannot evaluate, an unbalanced ``#endif``, or a macro invocation it cannot expand (its arguments across a
    directive, the wrong number of them, an expansion that does not end)."""
    macros = dict(defines)
    lines = text.split("\n")
    out: list[str] = []
    includes: list[Include] = []
    # one entry per open #if: (this group taken, some group of it already taken, enclosing groups all taken)
    stack: list[tuple[bool, bool, bool]] = []
    active = True
    i = 0
    # a block comment open at the start of the line; a macro invocation whose arguments continue on the next line:
    # its tokens so far, the line it starts on and that line's indentation
    in_comment = False
    pending: tuple[list[Tok], int, str] | None = None
    while i < len(lines):
        line = lines[i]
        n = i + 1
        # a directive continued with backslashes is one logical line
        joined = line
        extra = 0
        while joined.endswith("\\") and i + extra + 1 < len(lines):
            extra += 1
            joined = joined[:-1] + " " + lines[i + extra]
        m = _DIRECTIVE.match(joined) if not in_comment else None
        if m is None:
            i += 1
            if not active:
                out.append("")
                continue
            if pending is None and not in_comment and "/*" not in line and \
                    not any(w in macros for w in _IDENT.findall(line)):
                out.append(line)
                continue
            toks, in_comment = tokenize(line, n, in_comment)
            if pending is not None:
                toks = pending[0] + toks
            first, indent = (pending[1], pending[2]) if pending is not None else (n, line[:len(line) - len(line.lstrip())])
            loc = SourceLoc(file, first, 0, lines[first - 1].strip())
            try:
                expanded = _expand_tokens(toks, macros, i >= len(lines), loc)
            except Incomplete:
                pending = (toks, first, indent)
                continue
            pending = None
            if expanded == toks and first == n:
                out.append(line)
            else:
                out.extend(lines_of(expanded, first, n, indent))
            continue
        if pending is not None:
            # a directive inside a macro invocation's arguments: finish what can be (a name not followed by "(")
            toks, first, indent = pending
            loc = SourceLoc(file, first, 0, lines[first - 1].strip())
            try:
                expanded = _expand_tokens(toks, macros, True, loc)
            except Incomplete:
                raise Refused("macro arguments across a directive", loc, joined.strip()) from None
            out.extend(lines_of(expanded, first, n - 1, indent))
            pending = None
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
            dm = re.match(r"([A-Za-z_]\w*)(\([^)]*\))?\s*(.*)$", rest)
            if dm:
                parsed = Macro.parse(dm[1] + (dm[2] or ""), _strip_comment(dm[3]))
                if parsed is not None:
                    macros[parsed[0]] = parsed[1] if dm[2] else parsed[1].body
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
    assert pending is None  # the last line expands with final=True
    return Preprocessed("\n".join(out), tuple(includes), macros)
