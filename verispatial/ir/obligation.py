"""Typed obligation ids: what an obligation is about, with one printer (``str``) and one parser (``parse``).

An obligation's name — the certificate's key, the proof cache's, SARIF's fingerprint — is ``str(ObligationId)``:
``kind`` (a rule of the registry, ``ir/rules.py``), then ``:`` and its subject when it has one, behind a composed
program's ``slice<j>/`` prefix. The subject's grammar is the kind's (``Rule.subjects``):

=========  ======================================  ==========================================
subject    printed                                 example
=========  ======================================  ==========================================
op         ``ENGINE:[i, j]`` / ``ENGINE:end``      ``cb-capacity:(0,0).reader:[0]``
buffer     ``b<id>``                               ``balance-cb:b3``
alias      ``b<id>~b<id>``                         ``alias-clobber:b10~b11``
word       ``sem<id>@(x,y)``                       ``sem-exact:sem1@(1,0)``
tensor     the tensor's name                       ``bounds:kv``
component  ``ENGINE`` / ``ENGINE+N``               ``deadlock:(0,0).reader+3``
region     ``(x,y).SPACE.phase<k>``                ``memory-disjoint:(0,1).local.phase0``
ordering   ``T:ENGINE[i, j]`` [``<``/``~`` leaf]   ``hb-state:kv:(0,0).reader[4, 1]<(0,0).writer[1]``
boundary   ``after-section-<b>``                   ``hb-rendezvous:after-section-0``
crossing   ``T:after-section-<b>``                 ``hb-cross:x:after-section-1``
label      free text                               ``certificate:places``
=========  ======================================  ==========================================

Nothing else in the package takes a name apart: SARIF, JUnit, explain, the gate and the checker's replay read the
typed id. ``parse(str(x)) == x`` for every id (tests/test_obligation_ids.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import attrs

from verispatial.ir.core import Engine, Site
from verispatial.ir.rules import BY_NAME, Rule, Subject

_ENGINES = tuple(e.value for e in Engine)


class BadObligationId(ValueError):
    """A text that is not an obligation id of the registry's grammar (the message says where it fails)."""


def _bad(text: str, why: str) -> BadObligationId:
    return BadObligationId(f"not an obligation id: {text!r}: {why}")


def _site_text(s: Site) -> str:
    return f"({s.x},{s.y})"


def _parse_site(text: str) -> Site:
    if not (text.startswith("(") and text.endswith(")")):
        raise ValueError(text)
    x, y = text[1:-1].split(",")
    return Site(int(x), int(y))


def _parse_engine(text: str) -> str:
    """An engine key ``(x,y).reader`` checked and returned as it is."""
    site, dot, eng = text.rpartition(".")
    if not dot or eng not in _ENGINES:
        raise ValueError(text)
    _parse_site(site)
    return text


def _path_text(path: tuple[int, ...]) -> str:
    return str(list(path))


def _parse_path(text: str) -> tuple[int, ...]:
    if not (text.startswith("[") and text.endswith("]")):
        raise ValueError(text)
    inner = text[1:-1].strip()
    return tuple(int(x) for x in inner.split(",")) if inner else ()


@attrs.frozen
class OpRef:
    """An op of an engine program: ``path`` None for the engine's end (an end-of-run finding)."""

    engine: str
    path: tuple[int, ...] | None

    def __str__(self) -> str:
        return f"{self.engine}:{'end' if self.path is None else _path_text(self.path)}"

    @classmethod
    def parse(cls, text: str) -> OpRef:
        eng, _, rest = text.rpartition(":")
        return cls(_parse_engine(eng), None if rest == "end" else _parse_path(rest))


@attrs.frozen
class LeafRef:
    """An op written ``ENGINE[i, j]`` (inside an ordering)."""

    engine: str
    path: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.engine}{_path_text(self.path)}"

    @classmethod
    def parse(cls, text: str) -> LeafRef:
        i = text.index("[")
        return cls(_parse_engine(text[:i]), _parse_path(text[i:]))


@attrs.frozen
class BufferRef:
    buffer: int

    def __str__(self) -> str:
        return f"b{self.buffer}"

    @classmethod
    def parse(cls, text: str) -> BufferRef:
        if not text.startswith("b"):
            raise ValueError(text)
        return cls(int(text[1:]))


@attrs.frozen
class AliasRef:
    """A buffer and the partner it aliases, in that order."""

    buffer: int
    partner: int

    def __str__(self) -> str:
        return f"b{self.buffer}~b{self.partner}"

    @classmethod
    def parse(cls, text: str) -> AliasRef:
        a, b = text.split("~")
        return cls(BufferRef.parse(a).buffer, BufferRef.parse(b).buffer)


@attrs.frozen
class WordRef:
    """The word of semaphore ``sem`` at ``site``."""

    sem: int
    site: Site

    def __str__(self) -> str:
        return f"sem{self.sem}@{_site_text(self.site)}"

    @classmethod
    def parse(cls, text: str) -> WordRef:
        sem, _, site = text.partition("@")
        if not sem.startswith("sem"):
            raise ValueError(text)
        return cls(int(sem[3:]), _parse_site(site))


@attrs.frozen
class TensorRef:
    tensor: str

    def __str__(self) -> str:
        return self.tensor

    @classmethod
    def parse(cls, text: str) -> TensorRef:
        if not text:
            raise ValueError(text)
        return cls(text)


@attrs.frozen
class ComponentRef:
    """A deadlock component: its least engine and how many others it holds."""

    engine: str
    others: int = 0

    def __str__(self) -> str:
        return self.engine + (f"+{self.others}" if self.others else "")

    @classmethod
    def parse(cls, text: str) -> ComponentRef:
        eng, plus, n = text.partition("+")
        return cls(_parse_engine(eng), int(n) if plus else 0)


@attrs.frozen
class RegionRef:
    """A memory space of a site in one phase."""

    site: Site
    space: str
    phase: int

    def __str__(self) -> str:
        return f"{_site_text(self.site)}.{self.space}.phase{self.phase}"

    @classmethod
    def parse(cls, text: str) -> RegionRef:
        site, space, phase = text.split(".")
        if not phase.startswith("phase"):
            raise ValueError(text)
        return cls(_parse_site(site), space, int(phase[5:]))


@attrs.frozen
class OrderingRef:
    """Ops of tensor ``tensor`` that must be ordered: ``first`` alone (a read and whatever writes its tile), or
    ``first`` ``<`` ``second`` (first before second) or ``first`` ``~`` ``second`` (two writes, either order)."""

    tensor: str
    first: LeafRef
    second: LeafRef | None = None
    sep: str = "<"

    def __str__(self) -> str:
        tail = "" if self.second is None else f"{self.sep}{self.second}"
        return f"{self.tensor}:{self.first}{tail}"

    @classmethod
    def parse(cls, text: str) -> OrderingRef:
        # The tensor's name may hold ':'; the leaves may not: split at the ':' that starts the first leaf.
        i = text.rfind(":(")
        if i <= 0:
            raise ValueError(text)
        tensor, ops = text[:i], text[i + 1:]
        for sep in ("<", "~"):
            if sep in ops:
                a, b = ops.split(sep)
                return cls(tensor, LeafRef.parse(a), LeafRef.parse(b), sep)
        return cls(tensor, LeafRef.parse(ops))


_AFTER = "after-section-"


@attrs.frozen
class BoundaryRef:
    """The rendezvous after section ``section``."""

    section: int

    def __str__(self) -> str:
        return f"{_AFTER}{self.section}"

    @classmethod
    def parse(cls, text: str) -> BoundaryRef:
        if not text.startswith(_AFTER):
            raise ValueError(text)
        return cls(int(text[len(_AFTER):]))


@attrs.frozen
class CrossingRef:
    """Tensor ``tensor`` crossing the rendezvous after section ``section``."""

    tensor: str
    section: int

    def __str__(self) -> str:
        return f"{self.tensor}:{_AFTER}{self.section}"

    @classmethod
    def parse(cls, text: str) -> CrossingRef:
        tensor, _, b = text.rpartition(":")
        if not tensor:
            raise ValueError(text)
        return cls(tensor, BoundaryRef.parse(b).section)


@attrs.frozen
class LabelRef:
    label: str

    def __str__(self) -> str:
        return self.label

    @classmethod
    def parse(cls, text: str) -> LabelRef:
        return cls(text)


SubjectRef = (OpRef | BufferRef | AliasRef | WordRef | TensorRef | ComponentRef | RegionRef | OrderingRef
              | BoundaryRef | CrossingRef | LabelRef)

_PARSERS: dict[Subject, Callable[[str], SubjectRef]] = {
    Subject.OP: OpRef.parse, Subject.BUFFER: BufferRef.parse, Subject.ALIAS: AliasRef.parse,
    Subject.WORD: WordRef.parse, Subject.TENSOR: TensorRef.parse, Subject.COMPONENT: ComponentRef.parse,
    Subject.REGION: RegionRef.parse, Subject.ORDERING: OrderingRef.parse, Subject.BOUNDARY: BoundaryRef.parse,
    Subject.CROSSING: CrossingRef.parse, Subject.LABEL: LabelRef.parse,
}
_SLICE = "slice"


@attrs.frozen
class ObligationId:
    """One obligation: its ``kind`` (a registry rule name), its subject (None: the rule for the whole program, as
    reported when nothing breaks it) and, in a composed program, the ``slice`` it was proved for."""

    kind: str
    subject: SubjectRef | None = None
    slice: int | None = None

    def __attrs_post_init__(self) -> None:
        if self.kind not in BY_NAME:
            raise BadObligationId(f"no rule named {self.kind!r} in the rule registry (verispatial/ir/rules.py)")

    @property
    def rule(self) -> Rule:
        return BY_NAME[self.kind]

    def __str__(self) -> str:
        head = "" if self.slice is None else f"{_SLICE}{self.slice}/"
        return head + self.kind + ("" if self.subject is None else f":{self.subject}")

    def in_slice(self, j: int | None) -> ObligationId:
        return attrs.evolve(self, slice=j)

    @property
    def op(self) -> OpRef | None:
        """The op the obligation names: its own op subject, a deadlock component's engine, an ordering's first op."""
        s = self.subject
        if isinstance(s, OpRef):
            return s
        if isinstance(s, OrderingRef):
            return OpRef(s.first.engine, s.first.path)
        if isinstance(s, ComponentRef):
            return OpRef(s.engine, ())
        return None

    @property
    def tensor(self) -> str | None:
        s = self.subject
        if isinstance(s, (TensorRef, OrderingRef, CrossingRef)):
            return s.tensor
        return None

    @property
    def buffer(self) -> int | None:
        s = self.subject
        if isinstance(s, (BufferRef, AliasRef)):
            return s.buffer
        return None

    @property
    def word(self) -> WordRef | None:
        return self.subject if isinstance(self.subject, WordRef) else None

    @property
    def boundary(self) -> int | None:
        s = self.subject
        if isinstance(s, (BoundaryRef, CrossingRef)):
            return s.section
        return None


def parse(text: str) -> ObligationId:
    """The obligation id printed as ``text``; ``BadObligationId`` when ``text`` is no id of the grammar."""
    return _parse(text)


@functools.lru_cache(maxsize=65536)
def _parse(text: str) -> ObligationId:
    rest, j = text, None
    if rest.startswith(_SLICE) and "/" in rest:
        head, _, tail = rest.partition("/")
        if head[len(_SLICE):].isdigit():
            rest, j = tail, int(head[len(_SLICE):])
    kind, colon, subject = rest.partition(":")
    rule = BY_NAME.get(kind)
    if rule is None:
        raise _bad(text, f"no rule named {kind!r} in the rule registry")
    if not colon:
        return ObligationId(kind, None, j)
    for form in rule.subjects:
        try:
            return ObligationId(kind, _PARSERS[form](subject), j)
        except (ValueError, IndexError):
            continue
    raise _bad(text, f"{kind} takes a subject of the form {' or '.join(s.value for s in rule.subjects) or 'none'}")


def kind_of(text: str) -> str:
    """The rule kind of an obligation named ``text``: its id's ``kind`` (``BadObligationId`` if it is none)."""
    return parse(text).kind


_TAGS: dict[type, str] = {
    OpRef: "op", LeafRef: "leaf", BufferRef: "buffer", AliasRef: "alias", WordRef: "word", TensorRef: "tensor",
    ComponentRef: "component", RegionRef: "region", OrderingRef: "ordering", BoundaryRef: "boundary",
    CrossingRef: "crossing", LabelRef: "label",
}
_BY_TAG = {v: k for k, v in _TAGS.items()}


def subject_to_json(s: SubjectRef | LeafRef) -> dict[str, object]:
    """A subject as a JSON object: its ``type`` tag, its printed form ``text`` and its fields."""
    return {"type": _TAGS[type(s)], "text": str(s)}


def subject_from_json(d: object) -> SubjectRef | LeafRef:
    """Inverse of ``subject_to_json``; ``BadObligationId`` for an object that is not one."""
    if not isinstance(d, dict) or d.get("type") not in _BY_TAG or not isinstance(d.get("text"), str):
        raise BadObligationId(f"not a subject: {d!r}")
    cls = _BY_TAG[str(d["type"])]
    try:
        got: SubjectRef | LeafRef = cls.parse(str(d["text"]))  # type: ignore[attr-defined]
    except (ValueError, IndexError):
        raise BadObligationId(f"not a {d['type']} subject: {d['text']!r}") from None
    return got
