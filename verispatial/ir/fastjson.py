"""JSON text read by orjson (Rust) where that is certain to equal what ``json.loads`` reads (``fast_parse``): the program
loader (``ir/serialize.py``) and the proof store's reports (``driver/store.py``) read through it. No import beyond
orjson: a warm ``certify`` reads its report through it without the loader's modules."""

from __future__ import annotations

from typing import Any

import orjson

#: Byte map for ``fast_parse``'s integer-width test: each ASCII digit to ``0``, a point kept, every other byte to a
#: space.
_DIGITS_ONLY = bytes(48 if 48 <= i < 58 else 46 if i == 46 else 32 for i in range(256))
#: 19 digits in a row: the shortest integer literal orjson might read past 64 bits (2**63 has 19 digits). Digits after
#: a point are a fraction, which orjson rounds as ``json`` does (300,000 random doubles' reprs and long mantissas
#: agreed; tests/test_fast_parse.py): only a run not after a point is sent the general way.
_LONG_NUMBER = b"0" * 19
#: Such a run after a byte that is neither a digit nor a point.
_SPACED_LONG_NUMBER = b" " + _LONG_NUMBER


def fast_parse(text: str | bytes) -> Any | None:
    """``text`` read by orjson (Rust) when that is certain to give what ``json.loads`` with the duplicate-key hook
    gives, else None (then the caller reads it the general way, ``serialize.parse_json`` with ``json``, so every error
    and message is the same).

    orjson reads a document in about 0.6x of ``json.loads``; the hook that refuses duplicate keys costs another
    0.8x (a Python call per object), benchmarks/bench_load.py. orjson differs from ``json`` on four known inputs,
    each sent the general way: NaN/Infinity, a number past a double's range, an unpaired surrogate, a UTF-8 BOM or
    bytes that are not UTF-8 (orjson raises); an integer past 64 bits (orjson reads it as a float: any run of 19
    digits but a fraction's is sent back); and a duplicate key (orjson keeps the last, as ``json`` does, silently). Duplicates are
    found by counting colons: outside strings a colon separates exactly one key from its value, so with no
    ``\\u003a`` escape (the one escape that spells a colon) the text holds one colon per key plus those inside
    strings, and orjson's compact re-serialisation of what it read holds the same number exactly when no key was
    dropped (a dropped pair loses its key's colon, and never adds one). Other ``\\u`` escapes are orjson's to read:
    a pair joins into one character as in ``json``, an unpaired surrogate makes it raise (tests/test_fast_parse.py)."""
    raw = text if isinstance(text, bytes) else None
    if raw is None:
        try:
            raw = text.encode()  # type: ignore[union-attr]
        except UnicodeEncodeError:  # a lone surrogate character in a str
            return None
    if b"\\" in raw and (b"\\u003a" in raw or b"\\u003A" in raw):
        return None
    digits = raw.translate(_DIGITS_ONLY)
    # Any 19 digits first (one quick search), then only such a run not after a point: searching for the space before
    # it straight away stalls on every short run of digits (0.4x ``json.loads`` of a small program, not 0.03x).
    if _LONG_NUMBER in digits and (_SPACED_LONG_NUMBER in digits or digits.startswith(_LONG_NUMBER)):
        return None
    try:
        doc = orjson.loads(raw)
    except (orjson.JSONDecodeError, MemoryError):
        return None
    try:
        written = orjson.dumps(doc)
    except TypeError:  # nested past orjson's writing depth (it reads deeper than it writes)
        return None
    return doc if written.count(b":") == raw.count(b":") else None
