"""One folder per rule family (issue 15, item 4): each holds the family's reference semantics (``semantics.py``, the
interpreter's handlers for the family's op classes), its checker encoding (``encoding.py``, a kernel module) and its
Promela part (``promela.py``); its tests are ``tests/families/test_<family>.py``.

- ``cb/``: circular buffers (Reserve, Push, Wait, Pop, FillTiles, CopyTiles; several waiters on one buffer in ``shared_*.py``);
- ``semaphores/``: SemInc, SemIncMcast, SemSet, SemWait and remote writes landing on a word;
- ``accumulator/``: AcquireAcc, ReleaseAcc, Compute, PackAcc;
- ``noc/``: the asynchronous NoC (ReadTiles, WriteTiles, ReadBarrier, WriteBarrier, Flush, AtomicBarrier), and the
  rules on outstanding transactions other families apply (reads published early, write sources reused, transactions
  left at the end);
- ``multicast/``: McastSend and McastSetValid, leaving the source and landing at each destination;
- ``scratch/``: ScratchAccess, and what a ReadTiles into or a WriteTiles from a scratch buffer (private L1 of one
  engine, ``Buffer.scratch``) checks: ``scratch-unlanded``, ``scratch-reuse``;
- ``tensors/``: bounds, tensor races and unwritten outputs, applied by the NoC family's reads and writes (no op class),
  and the checker's happens-before queries (``ordering_encoding.py``);
- ``memory/``: the memory map (disjoint, in range, aligned) and aliased buffers' pages (``alias-clobber``; no op class);
- ``deadlock/``: no reachable state where every unfinished engine is blocked (no op class: the interpreter's run status);
- ``rendezvous/``: no engine passes a closing boundary before every engine arrived (``rendezvous-early``, checked
  before every engine step; no op class).

The chains that give ops their meaning — ``petri/interp.py``, ``petri/promela.py`` and ``certify/rules.py`` — each
assemble one ``{op class: handler}`` table from the families' ``HANDLERS`` and raise ``errors.UnhandledOp`` for an op
class with no entry (fail closed); so do, from the families' tables of the same names, the interpreter's and the
model's landings of what an op puts in flight (``LANDINGS``), the model's queue of each issuing op class
(``QUEUES``) and the interpreter's guard and block detail of each blocking op (``ENABLED``, ``BLOCKED``). The rule
registry (``ir/rules.py``) names, for every rule, the modules of its folder. A family's semantics and Promela part
import nothing of the checker (``tests/test_architecture.py``); the rules of one family another family's handler
applies are reached through the object the handler is handed where importing would make a cycle
(``Interp._source_reuse``, ``_Gen._read_publish``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

V = TypeVar("V")


def assemble(chain: str, *tables: Mapping[type, V]) -> dict[type, V]:
    """One dispatch table of ``chain`` from the families' tables (an op class's handler, its landing, its Promela
    queue); ``ValueError`` naming the op class when two families claim it (an op has one meaning, in one family)."""
    out: dict[type, V] = {}
    for table in tables:
        for cls, handler in table.items():
            if cls in out:
                raise ValueError(f"{chain}: two families handle op class {cls.__name__}")
            out[cls] = handler
    return out
