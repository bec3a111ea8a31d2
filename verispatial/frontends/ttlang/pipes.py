"""TT-Lang pipes and pipe nets (``ttl.Pipe``, ``ttl.PipeNet``, ``if_src`` / ``if_dst``) onto program.json.

TT-Lang's compiler lowers a pipe transfer with its receiver-post protocol (tt-lang
``lib/Dialect/TTL/Transforms/PipeLowering.cpp``: ``lowerPipeTransferPost``, ``lowerPipeTransferSend``,
``lowerPipeTransferWait``; PR #614 "recv post -> send post -> send wait -> recv wait"). Per pipe the front end
allocates two semaphores, as that lowering's resource plan does: the sender's *ready counter* (at the source node)
and the receivers' *completion counter* (at each destination node).

- ``ttl.copy(pipe, blk)`` at a destination (``blk`` reserved): ``SemInc(ready@src, 1)``
  (``emitSenderReadyIncrement``).
- its ``tx.wait()``: ``AtomicBarrier`` (the ready increment flushed before blocking, as the compiler's
  ``TTKernelBatchStaticPipeNetReceives.cpp`` emits), then ``SemWait(completion, ge, k)`` for the k-th receive of
  this kernel on the pipe (``SemaphoreWaitMinOp`` on the post's sequence number: affine in the loop indices).
- ``ttl.copy(blk, pipe)`` at the source: ``SemWait(ready, eq, n)`` (n receivers of a multicast, 1 of a unicast),
  ``SemSet(ready, 0)``, ``McastSend`` of the block (from its write pointer when reserved, its read pointer when
  waited) to the pipe's destinations (a group of one node for a unicast), ``WriteBarrier``, ``SemInc(completion@dst)``
  or ``SemIncMcast(completion)`` (plus ``SemInc`` of its own word when the source is a destination),
  ``AtomicBarrier``.
- its ``tx.wait()``: nothing (the send's ``ttl.wait`` lowers to a no-op).

The receiver publishes its reserved block's address to the sender in TT-Lang (``emitReceiverAddressPublish``);
program.json's multicast lands at the sender's own address in the buffer of the same index (``McastSend``), so
a pipe must carry a block of one dataflow buffer at both ends (refused otherwise) and the data lands at the sender's
ring slot, which each receiver must publish (``mcast-slot``, ``mcast-publish-early``): stricter than TT-Lang's
receiver-addressed write, never weaker.

A multi-device grid ``grid=(rows, cols, node_cols, node_rows)`` (TT-Lang's device-mesh axes first, as in tt-lang
``examples/eltwise_pipe_multidevice.py``) puts device ``(r, c)``'s node ``(x, y)`` at site
``(c * node_cols + x, r * node_rows + y)``: a pipe between devices is the same write-then-increment over the
fabric. What is not modelled there: the fabric routers' own channel buffers and credits (a transfer is taken to be
delivered, as every landing is), and the fabric's latency.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

import attrs

from verispatial.frontends.ttlang.expr import Evaluator, NetV, PipeV, SliceR
from verispatial.frontends.ttlang.refusals import refuse
from verispatial.ir.core import SemRole, Site
from verispatial.ir.program import Group, Semaphore


def _coords(ev: Evaluator, node: ast.AST, v: Any, grid: tuple[int, ...], what: str,
            ranges: bool) -> tuple[Any, ...]:
    vals = (v,) if isinstance(v, int) and not isinstance(v, bool) else v
    if not isinstance(vals, tuple):
        return ev.refuse_value(node, f"a pipe {what} that is not node coordinates known statically")  # type: ignore[no-any-return]
    if len(vals) == 1 and len(grid) > 1 and isinstance(vals[0], int):
        # a linear node index (the vendor's flatten_node_index, last axis fastest)
        n, out = vals[0], []
        for g in reversed(grid):
            out.append(n % g)
            n //= g
        vals = tuple(reversed(out))
    if len(vals) != len(grid):
        return ev.refuse_value(node, f"a pipe {what} with {len(vals)} coordinates on a {len(grid)}-dimensional grid")  # type: ignore[no-any-return]
    for c, g in zip(vals, grid, strict=True):
        if isinstance(c, SliceR) and ranges:
            if not 0 <= c.lo < c.hi <= g:
                return ev.refuse_value(node, f"a pipe {what} range {c.lo}:{c.hi} outside the grid's 0:{g}")  # type: ignore[no-any-return]
        elif not (isinstance(c, int) and not isinstance(c, bool) and 0 <= c < g):
            return ev.refuse_value(node, f"a pipe {what} coordinate {c!r} that is not a node of the grid")  # type: ignore[no-any-return]
    return tuple(vals)


def pipe_call(ev: Evaluator, node: ast.Call, name: str, args: list[Any], kwargs: dict[str, Any],
              grid: tuple[int, ...], nets: list[NetV]) -> Any:
    """``ttl.Pipe(src, dst)`` or ``ttl.PipeNet([pipes])``; a new net is appended to ``nets``."""
    if name == "ttl.Pipe":
        src = kwargs.get("src", args[0] if args else None)
        dst = kwargs.get("dst", args[1] if len(args) > 1 else None)
        return PipeV(_coords(ev, node, src, grid, "source", False), _coords(ev, node, dst, grid, "destination", True),
                     line=node.lineno)
    if kwargs or len(args) != 1 or not isinstance(args[0], tuple) or not all(isinstance(p, PipeV) for p in args[0]):
        return ev.refuse_value(node, "ttl.PipeNet of something other than a list of ttl.Pipe")
    if not args[0]:
        return ev.refuse_value(node, "a pipe net without pipes")
    k = len(nets)
    pipes = tuple(attrs.evolve(p, net=k, index=i) for i, p in enumerate(args[0]))
    net = NetV(k, pipes, node.lineno)
    nets.append(net)
    return net


def grid_sites(grid: tuple[int, ...]) -> list[tuple[tuple[int, ...], Site]]:
    """Every node's coordinates (row-major over the axes) with its site: ``(x, y)`` of a 2-D grid ``(cols, rows)``;
    ``(c * nx + x, r * ny + y)`` of a multi-device grid ``(rows, cols, nx, ny)``."""
    coords: list[tuple[int, ...]] = [()]
    for g in grid:
        coords = [(*c, v) for c in coords for v in range(g)]
    return [(c, site_of(c, grid)) for c in coords]


def site_of(c: Sequence[int], grid: tuple[int, ...]) -> Site:
    if len(grid) == 2:
        return Site(c[0], c[1])
    if len(grid) == 4:
        return Site(c[1] * grid[2] + c[2], c[0] * grid[3] + c[3])
    raise ValueError(f"a {len(grid)}-dimensional grid")


@attrs.frozen
class PipeRes:
    """What one pipe lowers onto: its ready and completion semaphores, its data group (loopback when the source is
    a destination) and the group of its remote destinations (the completion multicast excludes the sender)."""

    ready: int
    completion: int
    group: int
    remote_group: int | None
    src: Site
    dests: tuple[Site, ...]
    multicast: bool


class PipePlan:
    """Semaphores and groups of every pipe of an operation, numbered in pipe-net order."""

    def __init__(self, nets: Sequence[NetV], grid: tuple[int, ...], file: str) -> None:
        self.semaphores: list[Semaphore] = []
        self.groups: list[Group] = []
        self.res: dict[tuple[int, int], PipeRes] = {}
        self.file = file
        for net in nets:
            for p in net.pipes:
                src = site_of(p.src, grid)
                dests = tuple(site_of(d, grid) for d in p.dests())
                xs, ys = [d.x for d in dests], [d.y for d in dests]
                rect = (min(xs), min(ys), max(xs), max(ys))
                if len(dests) != (rect[2] - rect[0] + 1) * (rect[3] - rect[1] + 1):
                    refuse(file, None, f"ttl.Pipe at line {p.line}", "its destinations are not one rectangle of "
                                                                     "sites (a multi-device range across node axes)")
                loop = src in dests
                if dests == (src,):
                    refuse(file, None, f"ttl.Pipe at line {p.line}", "a pipe from a node to itself alone (a NoC write "
                                                                     "into its own memory) is not expressible: "
                                                                     "program.json's multicast needs another site")
                g = len(self.groups)
                self.groups.append(Group(g, src, rect, loopback=loop))
                remote = None
                multicast = any(isinstance(d, SliceR) for d in p.dst)
                if loop and len(dests) > 1:
                    remote = len(self.groups)
                    self.groups.append(Group(remote, src, rect, loopback=False))
                tag = f"net{net.index}.pipe{p.index}"
                ready = len(self.semaphores)
                self.semaphores.append(Semaphore(ready, f"{tag}.ready", (src,), 0, SemRole.MCAST_READY,
                                                 host_init=True))
                comp = len(self.semaphores)
                self.semaphores.append(Semaphore(comp, f"{tag}.completion", dests, 0, SemRole.MCAST_VALID,
                                                 host_init=True))
                self.res[(net.index, p.index)] = PipeRes(ready, comp, g, remote, src, dests, multicast)

    def of(self, p: PipeV) -> PipeRes:
        return self.res[(p.net, p.index)]


def check_ends(file: str, uses: dict[tuple[int, int], dict[str, set[tuple[int, str]]]], nets: Sequence[NetV]) -> None:
    """Every pipe carries blocks of one dataflow buffer at both ends (program.json's multicast lands at the sender's
    address in the buffer of the same index): ``uses[(net, pipe)][role]`` are the (buffer index, name) a role's
    copies use."""
    for net in nets:
        for p in net.pipes:
            u = uses.get((net.index, p.index), {})
            send, recv = u.get("send", set()), u.get("receive", set())
            both = send | recv
            if len({b for b, _ in both}) > 1:
                names = ", ".join(sorted(n for _, n in both))
                refuse(file, None, f"ttl.Pipe at line {p.line}",
                       f"carries blocks of different dataflow buffers at its ends ({names}): program.json's multicast "
                       "lands at the sender's own address, so both ends must use one dataflow buffer")

