"""C preprocessor macro expansion, token by token, as the C standard (C17 6.10.3) and GCC do it: object-like and
function-like macros, ``#`` (stringizing), ``##`` (token pasting), ``__VA_ARGS__``, GNU's ``, ## __VA_ARGS__``,
arguments fully expanded before substitution unless next to ``#`` / ``##``, the result rescanned, and a macro not
expanded again inside its own expansion (hide sets, Prosser's algorithm: "C Preprocessing Algorithm", D. Prosser,
1986, as in the C rationale). binary_ng's ``HAS_ACTIVATIONS(op)`` (eltwise_utils_common.hpp: an ``IS_EMPTY`` test
of ``PROCESS_##op##_ACTIVATIONS(0)`` through ``P_CAT`` / ``P_FIRST`` / ``P_COMPL``) is the corpus's hardest use.

Tokens keep the source line they came from (an expansion's tokens take the line of the macro's name), so a caller
can put the expanded text back on its lines and every op keeps the line the engineer wrote.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import attrs


@attrs.frozen
class Macro:
    """A macro: ``params`` None for an object-like one; ``variadic`` when its last parameter is ``...``
    (``__VA_ARGS__``); ``body`` its replacement text."""

    params: tuple[str, ...] | None
    body: str
    variadic: bool = False

    @staticmethod
    def parse(head: str, body: str) -> tuple[str, Macro] | None:
        """``NAME`` / ``NAME(a, b, ...)`` and its body as ``#define`` (or a host's ``-D``) states them; None if
        ``head`` is not a macro name."""
        m = re.fullmatch(r"\s*([A-Za-z_]\w*)(\(([^)]*)\))?\s*", head)
        if m is None:
            return None
        if m[2] is None:
            return m[1], Macro(None, body.strip())
        params = [p.strip() for p in m[3].split(",")] if m[3].strip() else []
        variadic = bool(params) and params[-1] == "..."
        if variadic:
            params[-1] = "__VA_ARGS__"
        return m[1], Macro(tuple(params), body.strip(), variadic)


#: a macro table: name -> replacement text (object-like, as ``#define N text``) or a ``Macro``
Macros = dict[str, "str | Macro"]


@attrs.frozen
class Tok:
    """A preprocessing token: its ``text``, ``kind`` (``id``, ``num``, ``str``, ``punct``, ``comment``), hide set
    ``hs`` (the macros not to expand it by), whether white space came before it, and its source ``line``."""

    text: str
    kind: str
    hs: frozenset[str] = frozenset()
    space: bool = False
    line: int = 0


_TOKEN = re.compile(r"""
    (?P<ws>[ \t\f\v\r]+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<open>/\*.*)
  | (?P<str>(?:u8|[uUL])?R"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)"|(?:u8|[uUL])?"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?)
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.'])*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<punct>\.\.\.|<<=|>>=|->\*?|\#\#|<=>|[-+*/%&|^!=<>]=|&&|\|\||<<|>>|\+\+|--|::|\.\*|\S)
""", re.X | re.S)


def tokenize(text: str, line: int, in_comment: bool = False) -> tuple[list[Tok], bool]:
    """The tokens of one source line ``text`` (line number ``line``), and whether a ``/* ... */`` comment is still
    open at its end. A line that starts inside such a comment (``in_comment``) has it as its first token."""
    out: list[Tok] = []
    i = 0
    space = False
    if in_comment:
        end = text.find("*/")
        lead = len(text) - len(text.lstrip())
        if end < 0:
            return [Tok(text[lead:], "comment", line=line)] if text.strip() else [], True
        out.append(Tok(text[lead: end + 2], "comment", line=line))
        i = end + 2
    still_open = False
    for m in _TOKEN.finditer(text, i):
        kind = m.lastgroup
        if kind == "ws":
            space = True
            continue
        if kind == "open":  # a block comment running past the line's end
            kind, still_open = "comment", True
        if kind == "delim":
            kind = "str"
        out.append(Tok(m[0], kind or "punct", space=space, line=line))
        space = False
    return out, still_open


def render(toks: list[Tok]) -> str:
    """Tokens as text: a space where the source (or an expansion) had white space."""
    parts: list[str] = []
    for t in toks:
        if parts and (t.space or _would_merge(parts[-1], t.text)):
            parts.append(" ")
        parts.append(t.text)
    return "".join(parts)


def _would_merge(a: str, b: str) -> bool:
    """Whether two adjacent token texts would read as one token (``+`` ``+``, two identifiers)."""
    if not a or not b:
        return False
    joined = a[-1] + b[0]
    return bool(re.fullmatch(r"[\w.][\w.]", joined)) or joined in ("++", "--", "&&", "||", "<<", ">>", "::", "->",
                                                                     "##", "+=", "-=", "==", "/*", "//", "*/")


class Incomplete(Exception):
    """A function-like macro's arguments run past the tokens given (they continue on the next line)."""


class Expander:
    """Expands token lists under ``macros``. ``max_steps`` bounds the work (a runaway expansion is refused by the
    caller as ``TooDeep``)."""

    def __init__(self, macros: Macros, max_steps: int = 100_000, in_if: bool = False) -> None:
        self.macros = macros
        self.steps = max_steps
        #: expanding a ``#if`` expression: the operand of ``defined``, also one an expansion brings in, is a name
        #: to decide, not to expand (GCC's behaviour)
        self.in_if = in_if
        self._bodies: dict[str, list[Tok]] = {}

    def body(self, name: str, m: str | Macro) -> list[Tok]:
        text = m.body if isinstance(m, Macro) else m
        key = f"{name}\0{text}"
        if key not in self._bodies:
            self._bodies[key] = [t for t in tokenize(text, 0)[0] if t.kind != "comment"]
        return self._bodies[key]

    def expand(self, ts: list[Tok], final: bool = True) -> list[Tok]:
        """``ts`` fully macro-expanded. With ``final`` False, a function-like macro whose argument list is not
        closed within ``ts`` raises ``Incomplete`` (the caller adds the next line and tries again); with it, such a
        name is left as it is, as a name not followed by ``(`` is."""
        out: list[Tok] = []
        rest = list(reversed(ts))  # a stack: the next token last
        while rest:
            t = rest.pop()
            if self.in_if and t.kind == "id" and t.text == "defined":
                out.append(t)
                for want in ("(", "id", ")"):
                    if rest and (rest[-1].text == want or rest[-1].kind == want):
                        out.append(rest.pop())
                continue
            m = self.macros.get(t.text) if t.kind == "id" and t.text not in t.hs else None
            if m is None:
                out.append(t)
                continue
            self._tick()
            if not isinstance(m, Macro) or m.params is None:
                hs = t.hs | {t.text}
                rest.extend(reversed(_leading(self._subst(t.text, m, [], hs, t), t, rest)))
                continue
            # a function-like macro: only when followed by "(" (white space and comments between)
            j = len(rest) - 1
            while j >= 0 and rest[j].kind == "comment":
                j -= 1
            if j < 0:
                if not final:
                    raise Incomplete()
                out.append(t)
                continue
            if rest[j].text != "(":
                out.append(t)
                continue
            del rest[j:]
            args, rparen = self._collect(rest, m, final, t)
            hs = (t.hs & rparen.hs) | {t.text}
            rest.extend(reversed(_leading(self._subst(t.text, m, args, hs, t), t, rest)))
        return out

    def _tick(self) -> None:
        self.steps -= 1
        if self.steps < 0:
            raise TooDeep()

    def _collect(self, rest: list[Tok], m: Macro, final: bool, name: Tok) -> tuple[list[list[Tok]], Tok]:
        """The arguments of an invocation whose ``(`` was just taken off ``rest`` (a stack), and its ``)``."""
        assert m.params is not None
        args: list[list[Tok]] = [[]]
        depth = 0
        while rest:
            t = rest.pop()
            if t.kind == "comment":
                continue
            if t.text == "(":
                depth += 1
            elif t.text == ")":
                if depth == 0:
                    if len(m.params) == 0 and args == [[]]:
                        args = []
                    return self._fit(args, m, name), t
                depth -= 1
            elif t.text == "," and depth == 0 and not (m.variadic and len(args) == len(m.params)):
                args.append([])
                continue
            args[-1].append(t)
        raise Incomplete()

    @staticmethod
    def _fit(args: list[list[Tok]], m: Macro, name: Tok) -> list[list[Tok]]:
        assert m.params is not None
        if m.variadic and len(args) == len(m.params) - 1:
            args.append([])  # F(a) of F(x, ...): __VA_ARGS__ empty
        if len(args) != len(m.params):
            if len(m.params) == 1 and not args:
                return [[]]
            raise ArgCount(f"{name.text} takes {len(m.params)} arguments, given {len(args)}")
        return args

    def _subst(self, name: str, m: str | Macro, args: list[list[Tok]], hs: frozenset[str], at: Tok) -> list[Tok]:
        """Prosser's ``subst``: the body with parameters replaced, ``#`` and ``##`` applied, ``hs`` added to
        every token's hide set, placed at the invocation's line."""
        params = m.params if isinstance(m, Macro) and m.params is not None else ()
        body = self.body(name, m)
        index = {p: i for i, p in enumerate(params)}
        out: list[Tok] = []
        i = 0
        while i < len(body):
            t = body[i]
            nxt = body[i + 1] if i + 1 < len(body) else None
            if t.text == "#" and params and nxt is not None and nxt.text in index:
                out.append(Tok(_stringize(args[index[nxt.text]]), "str", space=t.space))
                i += 2
                continue
            if t.text == "##" and nxt is not None:
                if nxt.text in index:
                    arg = args[index[nxt.text]]
                    gnu_comma = nxt.text == "__VA_ARGS__" and bool(out) and out[-1].text == ","
                    if not arg:
                        if gnu_comma:
                            out.pop()  # GNU: ", ## __VA_ARGS__" with no variadic arguments drops the comma
                    elif gnu_comma:
                        out.extend(arg)  # ... and with some keeps the comma and the arguments, not pasted
                    else:
                        out = _glue(out, arg)
                else:
                    out = _glue(out, [nxt])
                i += 2
                continue
            if t.text in index and nxt is not None and nxt.text == "##":
                arg = args[index[t.text]]
                if not arg:
                    after = body[i + 2] if i + 2 < len(body) else None
                    if after is not None and after.text in index:
                        out.extend(args[index[after.text]])
                        i += 3
                    else:
                        i += 2  # an empty left operand: the right one stands alone
                        if after is not None:
                            out.append(after)
                            i += 1
                    continue
                out.extend(_spaced(arg, t.space))
                i += 1
                continue
            if t.text in index:
                out.extend(_spaced(self.expand(args[index[t.text]]), t.space))
                i += 1
                continue
            out.append(t)
            i += 1
        return [attrs.evolve(x, hs=x.hs | hs, line=at.line) for x in out]


def _leading(repl: list[Tok], name: Tok, rest: list[Tok]) -> list[Tok]:
    """An expansion takes the white space before the macro's name; an empty one leaves it to the next token."""
    if repl:
        return [attrs.evolve(repl[0], space=name.space), *repl[1:]]
    if name.space and rest:
        rest[-1] = attrs.evolve(rest[-1], space=True)
    return repl


def _spaced(ts: list[Tok], space: bool) -> list[Tok]:
    return [attrs.evolve(ts[0], space=space), *ts[1:]] if ts else []


def _glue(left: list[Tok], right: list[Tok]) -> list[Tok]:
    """``left ## right``: the last token of ``left`` and the first of ``right`` pasted into one."""
    if not left:
        return list(right)
    if not right:
        return left
    a, b = left[-1], right[0]
    text = a.text + b.text
    toks, _ = tokenize(text, a.line)
    if len(toks) != 1:
        return [*left, attrs.evolve(b, space=False), *right[1:]]  # not one token: GCC keeps the two
    return [*left[:-1], Tok(text, toks[0].kind, a.hs & b.hs, a.space, a.line), *right[1:]]


def _stringize(ts: list[Tok]) -> str:
    s = render([attrs.evolve(t, space=t.space and i > 0) for i, t in enumerate(ts)])
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class TooDeep(Exception):
    """An expansion that does not end within the step budget."""


class ArgCount(Exception):
    """A function-like macro invoked with the wrong number of arguments."""


def names(macros: Macros) -> re.Pattern[str] | None:
    """A pattern finding any of ``macros``' names in a line (None when there are none)."""
    if not macros:
        return None
    return re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, macros), key=len, reverse=True)) + r")\b")


def lines_of(toks: list[Tok], first: int, last: int, indent: str) -> Iterator[str]:
    """The text of source lines ``first`` .. ``last`` from their tokens (an expansion's on its invocation's line),
    the first line keeping its indentation."""
    by_line: dict[int, list[Tok]] = {}
    for t in toks:
        by_line.setdefault(min(max(t.line, first), last), []).append(t)
    for n in range(first, last + 1):
        text = render(by_line.get(n, []))
        yield (indent + text) if n == first and text else text
