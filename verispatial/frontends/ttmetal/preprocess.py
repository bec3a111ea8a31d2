"""The C preprocessor, as far as kernels need it: ``#if``/``#ifdef``/``#elif``/``#else``/``#endif`` decided from the
host's defines and the file's own ``#define``s, object-like and function-like macros expanded (``macros.py``: ``#``,
``##``, ``__VA_ARGS__``, rescanning, as GCC does), ``#include``s listed.

Every line keeps its number (directives and lines of untaken branches become empty; a macro invocation whose
arguments run over several lines is expanded on its first line and the others left empty), so an op read from the
result is located at the line the engineer wrote.
"""

from __future__ import annotations

import ast
import itertools
import re
import warnings
from collections.abc import Callable
from typing import Any

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
#: directives GCC takes that change nothing a choreography depends on: diagnostics, pragmas, identification strings
_PASSIVE = frozenset({"pragma", "warning", "ident", "sccs", "assert", "unassert"})
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
_DEFINED = re.compile(r"\bdefined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*))")


@attrs.frozen
class Include:
    """An ``#include`` of the file: ``quoted`` for ``"..."`` (searched beside the file), else ``<...>``."""

    name: str
    quoted: bool
    line: int

    def text(self) -> str:
        """The file as the directive names it: ``"name"`` or ``<name>``."""
        return f'"{self.name}"' if self.quoted else f"<{self.name}>"


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
    expr = re.sub(r"\bnot\b", "!", expr)
    expr = re.sub(r"\band\b", "&&", expr)
    expr = re.sub(r"\bor\b", "||", expr)
    py = expr.replace("&&", " and ").replace("||", " or ").replace("/", "//")
    if not re.fullmatch(r"[\d\s()+\-*/<>=!%a-fA-FnortxXuUlL]*", py):
        raise Refused("#if expression", loc)
    # C's ``!`` binds as tightly as unary minus (``!2 == 1`` is ``(!2) == 1``); Python's ``not`` binds looser than
    # ``==``: ``~``, which _PPInt defines as the logical not, binds as C's ``!``
    py = re.sub(r"!(?!=)", " ~", py).strip()
    try:
        # every number a _PPInt: C's #if arithmetic (intmax_t, uintmax_t where an operand is unsigned, division
        # toward zero), not Python's
        py = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)\b", lambda m: f"_I({_pp_number(m[1])}, "
                                                                    f"{'u' in m[2].lower()})", py)
        if re.search(r"[a-zA-Z]", re.sub(r"_I\(\d+, (True|False)\)|\b(and|or)\b", "", py)):
            raise ValueError("a name or suffix not read")
        if any(isinstance(x, ast.Compare) and len(x.ops) > 1 for x in ast.walk(ast.parse(py, mode="eval"))):
            raise ValueError("chained comparison")  # C's 3 > 2 > 1 is (3 > 2) > 1, false; Python's is true
        with warnings.catch_warnings():  # Python's warnings about the text are not the user's business: it refuses
            warnings.simplefilter("ignore")
            # only numbers, operators and and/or/not reach here
            return bool(eval(py, {"__builtins__": {}, "_I": _PPInt}, {}))
    except ValueError as e:  # said by the reading: a chained comparison, a name or suffix not read
        raise Refused("#if expression", loc, str(e)) from None
    except Exception:
        raise Refused("#if expression", loc) from None


class _PPInt:
    """A number of a ``#if``: C evaluates it in intmax_t, or uintmax_t (64 bits here) when either operand of an
    operator is unsigned (``-1 > 0u`` holds), divides toward zero (``-7 / 2`` is -3, ``-7 % 3`` is -1); a signed
    overflow or a division by 0 is an error (``ZeroDivisionError``/``OverflowError``: the caller refuses)."""

    _MOD = 1 << 64

    def __init__(self, v: int, unsigned: bool = False) -> None:
        self.unsigned = unsigned
        self.v = v % self._MOD if unsigned else v
        if not unsigned and not -(1 << 63) <= self.v < 1 << 63:
            raise OverflowError("signed overflow in #if")

    @staticmethod
    def of(x: Any) -> _PPInt:
        return x if isinstance(x, _PPInt) else _PPInt(int(x))

    def _bin(self, o: Any, f: Callable[[int, int], int], rev: bool = False) -> _PPInt:
        a, b = (self.of(o), self) if rev else (self, self.of(o))
        return _PPInt(f(a.v, b.v), a.unsigned or b.unsigned)

    def _cmp(self, o: Any, f: Callable[[int, int], bool]) -> _PPInt:
        b = self.of(o)
        return _PPInt(int(f(self.v if not b.unsigned else self.v % self._MOD,
                             b.v if not self.unsigned else b.v % self._MOD)))

    def __add__(self, o: Any) -> _PPInt: return self._bin(o, lambda a, b: a + b)
    def __radd__(self, o: Any) -> _PPInt: return self._bin(o, lambda a, b: a + b, True)
    def __sub__(self, o: Any) -> _PPInt: return self._bin(o, lambda a, b: a - b)
    def __rsub__(self, o: Any) -> _PPInt: return self._bin(o, lambda a, b: a - b, True)
    def __mul__(self, o: Any) -> _PPInt: return self._bin(o, lambda a, b: a * b)
    def __rmul__(self, o: Any) -> _PPInt: return self._bin(o, lambda a, b: a * b, True)
    def __floordiv__(self, o: Any) -> _PPInt: return self._bin(o, _c_div)
    def __mod__(self, o: Any) -> _PPInt: return self._bin(o, lambda a, b: a - _c_div(a, b) * b)
    def __lt__(self, o: Any) -> _PPInt: return self._cmp(o, lambda a, b: a < b)  # type: ignore[override]
    def __le__(self, o: Any) -> _PPInt: return self._cmp(o, lambda a, b: a <= b)  # type: ignore[override]
    def __gt__(self, o: Any) -> _PPInt: return self._cmp(o, lambda a, b: a > b)  # type: ignore[override]
    def __ge__(self, o: Any) -> _PPInt: return self._cmp(o, lambda a, b: a >= b)  # type: ignore[override]
    def __eq__(self, o: Any) -> _PPInt: return self._cmp(o, lambda a, b: a == b)  # type: ignore[override]
    def __ne__(self, o: Any) -> _PPInt: return self._cmp(o, lambda a, b: a != b)  # type: ignore[override]
    def __lshift__(self, o: Any) -> _PPInt: return self._bin(o, _c_shift)
    def __rshift__(self, o: Any) -> _PPInt: return self._bin(o, lambda a, b: _c_shift(a, -b) if b >= 0 else 1 // 0)
    def __neg__(self) -> _PPInt: return _PPInt(-self.v, self.unsigned)
    def __pos__(self) -> _PPInt: return self
    def __invert__(self) -> _PPInt: return _PPInt(int(self.v == 0))  # C's logical ``!`` (see _cond)
    def __bool__(self) -> bool: return self.v != 0
    __hash__ = None  # type: ignore[assignment]


def _pp_number(text: str) -> int:
    """A ``#if`` integer literal: hexadecimal, octal (a leading 0; ``ValueError`` for a digit 8 or 9) or decimal."""
    if text[:2] in ("0x", "0X"):
        return int(text, 16)
    return int(text, 8) if text.startswith("0") else int(text)


def _c_shift(a: int, b: int) -> int:
    """``a << b`` (``a >> -b`` for a negative ``b``) of a 64-bit intmax_t / uintmax_t: a count past the width is
    undefined (``ZeroDivisionError``), as is a right shift of a negative number (implementation-defined)."""
    if abs(b) >= 64 or (b < 0 and a < 0):
        raise ZeroDivisionError("shift not defined")
    return a << b if b >= 0 else a >> -b


def _c_div(a: int, b: int) -> int:
    """``a / b`` toward zero, as C divides (``ZeroDivisionError`` for 0)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


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
                # comments are removed before directives are read (translation phase 3), in skipped groups too:
                # a ``#else`` inside a ``/* ... */`` of an ``#if 0`` group is no directive
                if in_comment or "/*" in line:
                    in_comment = tokenize(line, n, in_comment)[1]
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
        if "/*" in joined and tokenize(joined, n)[1]:
            # a comment opened in a directive and closed lines later is one space: the directive runs on past it
            # (``#if 0 /* ... */ || 1``)
            raise Refused("block comment from a directive across lines", SourceLoc(file, n, 0, joined.strip()))
        if kw in ("if", "ifdef", "ifndef"):
            if not active:
                stack.append((False, True, False))
                continue
            if kw == "if":
                taken = _cond(rest, macros, file, n)
            else:
                # the first token names the macro: GCC only warns about extra tokens (``#ifdef X extra``)
                name = next(iter(_strip_comment(rest).split()), "")
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
            # the name without a trailing comment: ``#undef X  // ...`` left X defined until 2026-12-06
            macros.pop(next(iter(_strip_comment(rest).split()), ""), None)
        elif kw == "include":
            im = re.match(r'\s*(?:"([^"]+)"|<([^>]+)>)', rest)
            if im:
                inc = Include(im[1] or im[2], im[1] is not None, n)
                includes.append(inc)
                if on_include is not None:
                    macros = dict(on_include(inc, macros))
            else:
                # ``#include HEADER`` names its file through a macro GCC expands; the reading would pass it over (the
                # header's definitions and macros unseen, its statements dropped), so it is refused
                raise Refused("computed #include", SourceLoc(file, n, 0, joined.strip()[:200]), rest.strip()[:200])
        elif kw == "error":
            # GCC stops at a taken ``#error``: the host's defines build no kernel (hybrid_merged_prologue.hpp:21-24
            # guards arguments that would otherwise be read at base 0), so there is nothing to certify
            raise Refused("#error", SourceLoc(file, n, 0, joined.strip()[:200]), _strip_comment(rest).strip()[:200])
        elif kw == "line" or kw.isdigit():
            # GCC reports the lines after ``#line N "file"`` (or the linemarker ``# N "file"``) as file:N, N+1, ...;
            # every op here keeps the line it stands on, so a counterexample would point elsewhere than GCC does
            raise Refused("#line", SourceLoc(file, n, 0, joined.strip()[:200]),
                          "the lines after it are numbered and named as GCC's diagnostics do not")
        elif kw in ("include_next", "import"):
            # each reads a file as #include does (the next one on the include path; one read once), so passing it
            # over drops its definitions and #defines; the reading follows neither GCC's path order nor #import's
            raise Refused(f"#{kw}", SourceLoc(file, n, 0, joined.strip()[:200]), "a header read as #include reads one")
        elif kw not in _PASSIVE:
            # GCC stops at an invalid one (a misspelt #include builds no kernel), and one it takes (C++23's
            # #elifdef) the reading's #if groups do not follow: passed over, either would be read as GCC does not
            raise Refused("unknown preprocessing directive", SourceLoc(file, n, 0, joined.strip()[:200]), f"#{kw}")
    if stack:
        raise Refused("#if without #endif", SourceLoc(file, len(lines), 0, ""))
    assert pending is None  # the last line expands with final=True
    return Preprocessed("\n".join(out), tuple(includes), macros)
