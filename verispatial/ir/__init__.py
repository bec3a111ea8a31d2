"""The verispatial IR: immutable entities, ops, targets, JSON and structural validation."""

from verispatial.ir.core import Addr, Dynamic, Engine, Role, SemRole, Site, Space, Term, WaitCond
from verispatial.ir import ops as _ops
from verispatial.ir.ops import *  # noqa: F403
from verispatial.ir.program import (
    Buffer,
    BufferAt,
    EngineProgram,
    Group,
    Program,
    SectionSpan,
    Semaphore,
    Tensor,
    Trip,
)
from verispatial.ir.target import BLACKHOLE, GPU, TARGETS, WORMHOLE, Target, get_target

__all__ = [
    "BLACKHOLE", "GPU", "TARGETS", "WORMHOLE", "Addr", "Buffer", "BufferAt", "Dynamic", "Engine",
    "EngineProgram", "Group", "Program", "Role", "SectionSpan", "SemRole", "Semaphore", "Site", "Space",
    "Target", "Tensor", "Term", "Trip", "WaitCond", "get_target",
]
__all__ += [t.__name__ for t in _ops.OP_TAGS] + ["Op", "OP_TAGS", "op_text"]
