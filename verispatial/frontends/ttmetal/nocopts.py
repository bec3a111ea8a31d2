"""A NoC call's options read as values: the template arguments and option fields that change what a call does
(posted or not, a transaction id, the multicast's own core, a virtual channel, ``NocOptions`` bits), evaluated as
C++ would (a ``constexpr`` variable, an alias, a function template's parameter, ``true`` or ``1``, the bit-or of
``NocOptions`` enumerators), never compared as text: ``noc_async_write<NOC_MAX_BURST_SIZE + 1, true, kPosted>`` is
posted whatever its argument is spelled (ttnn 0.81.1 ``tt_metal/hw/inc/api/dataflow/dataflow_api.h:874``), and so is
``noc.async_write<kOpts>`` with ``kOpts = NocOptions::POSTED`` (``api/dataflow/noc.h:410``). An option whose value
the reading does not know is refused by name at the call's line.

Transaction ids (``NocOptions::TXN_ID``): a barrier with one waits only for the transfers tagged with that id
(``noc.h:717-722, 738-742, 761-773`` call ``noc_async_{read,write}_barrier_with_trid`` and
``noc_async_write_flushed_with_trid``, ``dataflow_api.h:2562-2566, 2709-2714, 2734-2739``, which spin on
``NIU_MST_REQS_OUTSTANDING_ID(trid)``, wormhole ``noc_nonblocking_api.h:454-456, 602-604``). The model's barriers wait
for every transfer of their kind, so ``Tags`` keeps, per kind, the id every transfer of the kernel was issued with;
a barrier on id ``t`` is read as the whole barrier only when every transfer of its kind carries ``t``, checked when
the kernel has been read (``Tags.check``), else refused by name at the barrier's line."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs

from verispatial.frontends.ttmetal import enums
from verispatial.frontends.ttmetal import values as V
from verispatial.frontends.ttmetal.refusals import Refused
from verispatial.ir.ops import InlineWrite, McastSend, McastSetValid, ReadTiles, RemoteRead, SemIncMcast, WriteTiles
from verispatial.ir.source import SourceLoc

if TYPE_CHECKING:
    from verispatial.frontends.ttmetal.lower import KernelReader

#: ``NocOptions`` bits, api/dataflow/noc.h:77-85
TXN_ID, POSTED, CUSTOM_VC, MCAST_INCL_SRC, INLINE_L1, INLINE_REG = 1, 2, 4, 8, 16, 32
_NAMES = {TXN_ID: "TXN_ID", POSTED: "POSTED", CUSTOM_VC: "CUSTOM_VC", MCAST_INCL_SRC: "MCAST_INCL_SRC",
          INLINE_L1: "INLINE_L1", INLINE_REG: "INLINE_REG"}
#: a transfer's transaction id when it is not known statically
UNKNOWN = -1
READ, WRITE = "read", "write"
#: the ops a read barrier waits for, and those a write barrier or flush waits for (``noc_nonposted_writes_*``)
_READS = (ReadTiles, RemoteRead)
_WRITES = (WriteTiles, McastSend, McastSetValid, SemIncMcast, InlineWrite)


@attrs.frozen
class NocOpts:
    """An object-API call's ``NocOptions`` (its first template argument; ``DEFAULT``, 0, when absent)."""

    bits: int = 0

    def has(self, flag: int) -> bool:
        return bool(self.bits & flag)

    def names(self, flags: int) -> str:
        return " | ".join(name for bit, name in _NAMES.items() if self.bits & flags & bit) or "DEFAULT"


def _evaluated(r: KernelReader, a: Any) -> V.Value:
    if a.type == "parenthesized_expression" and a.named_child_count == 1:
        return _evaluated(r, a.named_children[0])
    if a.type == "binary_expression" and a.child_by_field_name("operator").type == "|":
        x, y = _evaluated(r, a.child_by_field_name("left")), _evaluated(r, a.child_by_field_name("right"))
        if isinstance(x, V.Sym) and x.is_const and isinstance(y, V.Sym) and y.is_const:
            return V.const(x.const | y.const)  # ``operator|`` of NocOptions, noc.h:87-89
        return V.Opaque(f"a bit-or not followed: {r.text(a)}")
    v = r.template_value(a) if a.type == "type_descriptor" else r.expr(a)
    return enums.number(r, v)


def value(r: KernelReader, a: Any, what: str, n: Any) -> int:
    """Template or option argument ``a`` of call ``n`` as a number; refused by name (``what``) when the reading does
    not know it statically."""
    v = _evaluated(r, a)
    if isinstance(v, V.Sym) and v.is_const:
        return v.const
    why = v.why if isinstance(v, V.Opaque) else "not a constant"
    return r.refuse(f"NoC {what} not known statically", n, f"{r.text(n)}: {r.text(a)}: {why}")


def flag(r: KernelReader, targs: list[Any], at: int, what: str, n: Any, default: bool = False) -> bool:
    """The bool template argument at position ``at`` (``default`` when absent): C++'s conversion to bool of its
    value (``1`` is ``true``)."""
    if len(targs) <= at:
        return default
    return value(r, targs[at], what, n) != 0


def options(r: KernelReader, targs: list[Any], n: Any) -> NocOpts:
    """An object-API call's ``NocOptions`` template argument (the first), evaluated."""
    return NocOpts(value(r, targs[0], "NocOptions", n) if targs else 0)


def only(r: KernelReader, opts: NocOpts, allowed: int, what: str, n: Any) -> None:
    """Refuses by name an option of ``opts`` outside ``allowed``: one whose effect the reading of ``what`` does not
    model."""
    extra = opts.bits & ~allowed
    if extra:
        r.refuse(f"{what} with NocOptions::{NocOpts(extra).names(extra)}", n, r.text(n))


def trid(r: KernelReader, noc_opts: Any, n: Any) -> int:
    """``noc_opts.trid`` (``NocOptVals``, noc.h:104-107; 0 when not designated) of a call with ``TXN_ID``;
    ``UNKNOWN`` when the reading does not follow it."""
    if noc_opts is None:
        return 0
    if not isinstance(noc_opts, V.Designated):
        return UNKNOWN
    t = noc_opts.get("trid")
    if t is None:
        return 0
    return t.const if isinstance(t, V.Sym) and t.is_const else UNKNOWN


@attrs.define
class Tags:
    """The ops issued with a transaction id (by ``id``, each kept with its id: ``KernelReader.emit``), and the
    barriers on one id, each with its kind, id, line and name."""

    tagged: dict[int, tuple[Any, int]] = attrs.field(factory=dict)
    barriers: list[tuple[str, int, SourceLoc, str]] = attrs.field(factory=list)

    def check(self, ops: Iterable[Any]) -> None:
        """Raises ``Refused`` at the first barrier on an id that some transfer of its kind among the kernel's
        ``ops`` (all of them, walked) does not carry: an op not tagged where it was emitted (a helper's, a copy)
        counts as untagged, which can only refuse more."""
        if not self.barriers:
            return
        issued: dict[str, set[int | None]] = {READ: set(), WRITE: set()}
        for op in ops:
            kind = READ if isinstance(op, _READS) else WRITE if isinstance(op, _WRITES) else None
            if kind is not None:
                hit = self.tagged.get(id(op))
                issued[kind].add(hit[1] if hit is not None and hit[0] is op else None)
        for kind, t, loc, what in self.barriers:
            others = issued[kind] - {t}
            if t == UNKNOWN or others:
                seen = ", ".join(sorted("untagged" if x is None else "of a trid not known statically" if x == UNKNOWN
                                        else f"tagged trid {x}" for x in others))
                detail = ("its trid is not known statically" if t == UNKNOWN else
                          f"it waits only for {kind}s tagged trid {t}; this kernel also issues {kind}s {seen}")
                raise Refused(f"{what} with a transaction id", loc, detail)
