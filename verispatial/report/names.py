"""How a report names a buffer or a semaphore word to a person: the program's name with its site — ``c_0@(1,0)``,
``sender_sem@(0,1)`` — and the id besides only where the name alone is ambiguous (two buffers of one site with one
name, from two sections: ``c_0@(0,0) (b3)``). ``certify``'s text and ``explain`` both name them so; ids stay the
machine keys (obligation ids, the certificate, ``--json``).

The checker's and the interpreter's texts are made from ids (``b0``, ``sem2@(0,1)``, ``b0 (c_0)``); ``named`` puts
the names in for display. An id right after a ``:`` is part of an obligation id (``balance-cb:b3``,
``sem-exact:sem0@(1,0)``) and is left as it is.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from verispatial.ir.core import Site
from verispatial.ir.ops import OP_TAGS
from verispatial.ir.program import Program


class _Names:
    """The names of one program's buffers and semaphore words, with how often each name occurs where it would be
    ambiguous (counted once, so naming a long report's texts is linear in the program and the texts)."""

    def __init__(self, p: Program) -> None:
        self.p = p
        self.buffers_named = Counter((b.name, b.site) for b in p.buffers)
        self.words_named = Counter((s.name, site) for s in p.semaphores for site in set(s.sites))
        self.semaphores_named = Counter(s.name for s in p.semaphores)

    def buffer(self, b: int) -> str:
        buf = self.p.buffers[b]
        return f"{buf.name}@{buf.site}" + (f" (b{b})" if self.buffers_named[(buf.name, buf.site)] > 1 else "")

    def word(self, sem: int, site: Site) -> str:
        s = self.p.semaphores[sem]
        twin = self.words_named[(s.name, site)] > (1 if site in s.sites else 0)
        return f"{s.name}@{site}" + (f" (sem{sem})" if twin else "")

    def semaphore(self, sem: int) -> str:
        s = self.p.semaphores[sem]
        return s.name + (f" (sem{sem})" if self.semaphores_named[s.name] > 1 else "")

    def text(self, text: str) -> str:
        out: list[str] = []
        at = 0
        for m in _CALL.finditer(text):
            if m.group(1) in _TAGS:
                out.append(_ID.sub(self._full, text[at:m.start()]))
                out.append(f"{m.group(1)}({_ID.sub(self._bare, m.group(2))})")
                at = m.end()
        out.append(_ID.sub(self._full, text[at:]))
        return "".join(out)

    def _full(self, m: re.Match[str]) -> str:
        i = int(m.group(2))
        if m.group(1) == "b":
            if i >= len(self.p.buffers):
                return m.group(0)
            at = f"@({m.group(3)},{m.group(4)})" if m.group(3) is not None else ""
            shown = self.buffer(i)
            # a buffer's site is its own: that site written after it is already in the name
            return shown if not at or at == f"@{self.p.buffers[i].site}" else shown + at
        if i >= len(self.p.semaphores):
            return m.group(0)
        if m.group(3) is None:
            return self.semaphore(i)
        return self.word(i, Site(int(m.group(3)), int(m.group(4))))

    def _bare(self, m: re.Match[str]) -> str:
        i = int(m.group(2))
        table = self.p.buffers if m.group(1) == "b" else self.p.semaphores
        if i >= len(table):
            return m.group(0)
        site = f"@({m.group(3)},{m.group(4)})" if m.group(3) is not None else ""
        return table[i].name + site


def buffer_name(p: Program, b: int) -> str:
    """Buffer ``b`` of ``p`` as a person reads it: ``c_0@(1,0)``, with `` (b<id>)`` when another buffer of its site has
    its name. Raises ``IndexError`` for an id ``p`` has no buffer of."""
    return _Names(p).buffer(b)


def word_name(p: Program, sem: int, site: Site) -> str:
    """The word of semaphore ``sem`` at ``site``: ``sender_sem@(0,1)``, with `` (sem<id>)`` when another semaphore
    with a word at that site has its name. Raises ``IndexError`` for an id ``p`` has no semaphore of."""
    return _Names(p).word(sem, site)


def semaphore_name(p: Program, sem: int) -> str:
    """Semaphore ``sem`` (all its words): its name, with `` (sem<id>)`` when another semaphore has it."""
    return _Names(p).semaphore(sem)


# ``b3``, ``b3 (c_0)``, ``sem2``, ``sem2 (flag)``, each maybe followed by ``@(x,y)``; not right after a ``:`` (an
# obligation id's subject) nor inside a longer word.
_ID = re.compile(r"(?<![:\w])(b|sem)(\d+)(?: \([^()]*\))?(?:@\((\d+),(\d+)\))?(?!\w)")

# An op as ``op_text`` writes it (``reserve(b0, 8)``): its arguments are named as ``op_text`` names them.
_CALL = re.compile(r"(?<![\w.])([a-z_]+)\(([^()]*)\)")
_TAGS = frozenset(OP_TAGS.values())


def named(p: Program, text: str) -> str:
    """``text`` (the checker's or the interpreter's, made from ids) with every buffer and semaphore word named as
    ``buffer_name`` / ``word_name`` / ``semaphore_name`` do — ``reserve of 8 pages on b0`` reads ``reserve of 8 pages
    on c_0@(0,0)``, ``sem2 (in1_sender_sem)@(0,1)`` reads ``in1_sender_sem@(0,1)`` — and an op's arguments by their
    names alone, as ``op_text`` names them (``reserve(b0, 8)`` reads ``reserve(c_0, 8)``: the op's engine gives the
    site). An id ``p`` has none of stays."""
    return _Names(p).text(text)


def namer(p: Program | None) -> Callable[[str], str]:
    """``named`` of ``p`` as a function of the text, the program's names counted once (what a report of many texts
    applies: ``text.report_lines``, ``--sarif``, ``--junit``); the text as it is without a program."""
    if p is None:
        return str
    return _Names(p).text
