"""The numeric range of the model: what ``validate`` refuses as too large before any checker or interpreter runs.

Every count, size and index a program names is a machine word on the hardware, so the model takes nothing larger;
a number past these limits is bad input (exit 2) in every command, never a checker error, and ``validate`` refuses
exactly what ``certify`` cannot take. Sources (tt-metal, ``tt_metal/hw/inc/dataflow_api.h``):

- ``PAGES_MAX``: ``cb_reserve_back`` / ``cb_wait_front`` compare 16-bit differences of the pages-received and
  pages-acked counters (``uint16_t free_space_pages_wrap``), so no one op may move more than 2**16 - 1 pages (as a
  buffer holds at most that many, ``validate``'s capacity rule).
- ``U32``: trip counts arrive as 32-bit runtime arguments (``get_arg_val<uint32_t>``), tile ids and sizes of NoC
  transfers are ``uint32_t`` (``noc_async_read_tile(const uint32_t id, ...)``), local-memory addresses are 32-bit:
  loop counts, trip maxima, tile addresses (base, coefficients, dynamic ranges) and every
  tensor's tile count stay within 2**32 - 1 in magnitude.
- ``TILES_MAX``, ``RANK_MAX``, ``NEST_MAX``, ``MESH_MAX``: model limits (no hardware program comes near them): one
  op moves at most 65535 tiles, a tensor has at most
  8 dimensions, ops nest at most 32 loops/ifs deep (every pass and query recurses on the nesting), a mesh has at
  most 256 x 256 sites (the largest built-in target has 130).
- ``DIGITS_MAX``: JSON integers longer than Python's integer-parsing limit (4300 digits) are refused while parsing.
"""

from __future__ import annotations

import unicodedata
from typing import Any

#: Pages one circular-buffer op may name (16-bit CB counters).
PAGES_MAX = 2**16 - 1
#: Largest count, size or tile index (32-bit runtime arguments, tile ids and addresses).
U32 = 2**32 - 1
#: Tiles one op reads, writes, packs or computes (a model limit: the window an op fills or drains is at most a
#: buffer of 65535 pages; the largest op of the shipped corpus moves 128 tiles).
TILES_MAX = 2**16 - 1
#: Dimensions of one tensor.
RANK_MAX = 8
#: Loops and ifs nested inside one another.
NEST_MAX = 32
#: Columns or rows of a mesh.
MESH_MAX = 256
#: The largest document (program, model graph, certificate) read, in bytes: 512 MiB. The composed 16-layer
#: Llama-3.2-1B decode step is 33 MB; a fuzzed 1.2 GB file of nested arrays ran the JSON reader out of memory.
DOCUMENT_MAX_BYTES = 512 * 2**20
#: Longest name of a program, tensor, buffer, semaphore, trip, section, loop variable or graph op (names are printed
#: in every report and message; a longer one is bad input, not a 100 KB line).
NAME_MAX = 256
#: Characters of the input a bad-input message quotes (longer values are cut with an ellipsis).
QUOTE_MAX = 200


def clip(text: str, limit: int = QUOTE_MAX) -> str:
    """``text`` cut to at most ``limit`` characters (an ellipsis and the original length replace the rest)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


def format_mismatch(fmt: str, version: int, doc: dict[str, Any]) -> str:
    """The rule broken by a document whose ``format`` / ``version`` are not ``fmt`` / ``version``, quoting what it
    holds (each value cut to ``QUOTE_MAX`` characters; ``missing`` for an absent field)."""
    def got(field: str) -> str:
        return clip(repr(doc[field])) if field in doc else "missing"
    return f"expected format {fmt!r} and version {version}, got format {got('format')} and version {got('version')}"


def too_large(value: int, limit: int) -> bool:
    """Whether ``value`` lies outside ``[-limit, limit]``."""
    return not -limit <= value <= limit


def ring_slots(first: int, n: int, cap: int) -> set[int]:
    """The slots of a ``cap``-page ring that pages ``[first, first + n)`` occupy: ``{(first + j) % cap}``, built
    in ``min(n, cap)`` steps (a push of 65535 pages into a 2-page ring touches 2 slots, not 65535)."""
    if n <= 0:
        return set()
    if n >= cap:
        return set(range(cap))
    return {(first + j) % cap for j in range(n)}


#: The Unicode bidirectional formatting characters (Unicode Standard Annex #9, table 2: the embeddings, overrides,
#: isolates and marks): printed in a report, one reorders how the rest of its line reads ("Trojan Source",
#: CVE-2021-42574).
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def name_rule(name: str) -> str | None:
    """Why ``name`` cannot be a name, or None: at most ``NAME_MAX`` characters, none a control character (a
    newline or an ANSI escape in a name would forge report lines or drive the user's terminal), a bidirectional
    control (``BIDI_CONTROLS``) or an unpaired surrogate (which no report can print)."""
    if len(name) > NAME_MAX:
        return f"a name has at most {NAME_MAX} characters, got {len(name)}"
    if name.isascii() and name.isprintable():  # no control character (the common case, one C call)
        return None
    if any(unicodedata.category(c) == "Cc" for c in name):
        return "a name holds no control characters (newlines, tabs, escapes)"
    if not BIDI_CONTROLS.isdisjoint(name):
        return "a name holds no bidirectional controls (they reorder a report line on the terminal)"
    if any(unicodedata.category(c) == "Cs" for c in name):  # a JSON "\udcff" escape: UTF-8 cannot print it
        return "a name holds no unpaired surrogates (not Unicode text)"
    return None
