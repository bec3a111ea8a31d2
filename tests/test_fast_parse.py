"""The orjson reading of a document (``serialize._fast_parse``) agrees with the ``json`` one it stands in for
(``serialize._parse_general``): the same values, the same errors with the same one-line messages, and the same IR
for every program of the corpus and of the strategies. The known traps of fast parsers each have a test: duplicate
keys, NaN/Infinity, integers past 64 bits, lone surrogates (escaped and as UTF-8 bytes), a byte-order mark."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verispatial.errors import ParseError
from verispatial.ir import serialize
from verispatial.ir.serialize import _fast_parse, _parse_general, dumps, loads_document, parse_json
from verispatial.strategies.programs import blueprints

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted(p for d in ("proofs", "examples") for p in (ROOT / d).rglob("*.json")
                if not p.name.endswith(".certificate.json"))


def general(text: str | bytes) -> tuple[str, Any]:
    """("ok", value) or ("error", message) of the ``json`` reading."""
    try:
        return "ok", _parse_general(text)
    except (ParseError, RecursionError) as e:  # nested past Python's recursion limit: raised as before
        return "error", f"{type(e).__name__}: {e}"


def either(text: str | bytes) -> tuple[str, Any]:
    """The same of ``parse_json`` (the orjson reading where it is certain to agree)."""
    try:
        return "ok", parse_json(text)
    except (ParseError, RecursionError) as e:
        return "error", f"{type(e).__name__}: {e}"


def same(a: Any, b: Any) -> bool:
    """Equal JSON values, types included (1 is not 1.0; NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def agree(text: str | bytes) -> None:
    got, want = either(text), general(text)
    assert got[0] == want[0], (text, got, want)
    assert same(got[1], want[1]) if got[0] == "ok" else got[1] == want[1], (text, got, want)


@pytest.mark.parametrize("text", [
    b'{"a": 1, "a": 2}',  # a duplicate key at the top
    b'{"x": [{"op": "push", "buf": 0, "pages": 1, "pages": 2}]}',  # ... and deep
    b'{"a": "k:v", "b": {"c": 1, "c": "x:y"}}',  # a duplicate beside colons inside strings
    b'{"a": 1, "b\\u003a": 2}',  # an escaped colon (the count would miss it): the general way
    b'{"x": 1, "x": 2, "y": "\\u003a"}', b'{"x": 1, "x": 2, "y": "\\u003A"}',  # a duplicate the escape would hide
    b'{"a": 1, "\\u0061": 2}',  # a duplicate spelled with an escape
    b'{"a": 0.00035299300361657515}', b'{"a": 0.1234567890123456789012345}', b'{"a": 1e0000000000000000000005}',
    b'12345678901234567890', b'-12345678901234567890.5', b'{"a": 1.5e-0000000000000000000300}',
    b'{"a": "\\u00e9\\u2192 \\u0000"}', b'{"a": "\\udcff"}', b'{"a": "x\\ude00"}',
    b'{"a": NaN}', b'{"a": Infinity}', b'{"a": -Infinity}', b'{"a": 1e400}', b'{"a": -1e400}',
    b'{"a": 18446744073709551616}', b'{"a": -9223372036854775809}', b'{"a": 123456789012345678901234567890}',
    b'{"a": 9223372036854775807}', b'{"a": 18446744073709551615}', b'{"a": 1.2345678901234567890123}',
    b'{"a": "\\ud800"}', b'{"a": "\\udcff x"}', b'{"\\ud800": 1}', b'{"a": "\\ud83d\\ude00"}',
    b'{"a": "\xed\xa0\x80"}',  # a surrogate written as UTF-8 bytes (not UTF-8)
    b'\xef\xbb\xbf{"a": 1}',  # a byte-order mark
    b'{"a": "\xff"}', b'', b'   ', b'{"a": 1', b'[1, 2,]', b'{"a": 01}', b'{"a": 1e-400}', b'{"a": -0}',
    b'{"a": -0.0}', b'{"a": 8.0}', b'{"a": 1E2}', b'{"a": "tab\tinside"}', b'"just a string"', b'[]', b'null',
    '{"a": "\ud800"}',  # a str holding a lone surrogate character
    '\ufeff{"a": 1}',
    b'[' * 2000 + b']' * 2000, b'[' * 300 + b']' * 300, b'[' * 200 + b']' * 200,  # deeper than orjson's writing limit
], ids=lambda t: repr(t)[:40])
def test_known_traps_read_as_before(text: str | bytes) -> None:
    agree(text)


def test_duplicates_and_big_integers_never_take_the_fast_way() -> None:
    assert _fast_parse(b'{"a": 1, "a": 2}') is None
    assert _fast_parse(b'{"a": {"k": "x:y", "k": 1}}') is None
    assert _fast_parse(b'{"a": 18446744073709551616}') is None
    assert _fast_parse(b'{"a": NaN}') is None
    assert _fast_parse(b'{"a": "\\ud800"}') is None
    assert _fast_parse(b'{"x": 1, "x": 2, "y": "\\u003a"}') is None
    assert _fast_parse(b'{"a": "\\u00e9 k:v"}') == {"a": "\u00e9 k:v"}  # an escape that is no colon: the fast way
    assert _fast_parse(b'{"a": "k:v", "b": [1, 2.5, null, true]}') == {"a": "k:v", "b": [1, 2.5, None, True]}
    with pytest.raises(ParseError, match="key 'a' appears twice in one object"):
        parse_json(b'{"a": {"k": "x:y"}, "a": 2}')


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text()
    | st.sampled_from(["\ud800", "x\udcff", "\ude00\ud83d", "k:v", ":"]),  # lone surrogates (st.text has none), colons
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=300)
@given(value=json_values, ensure_ascii=st.booleans(), duplicate=st.booleans())
def test_any_json_text_reads_as_before(value: Any, ensure_ascii: bool, duplicate: bool) -> None:
    text = json.dumps({"v": value}, ensure_ascii=ensure_ascii)
    if duplicate:
        text = text[:-1] + ', "v": 0}'
    agree(text)
    try:
        agree(text.encode())
    except UnicodeEncodeError:  # a lone surrogate in a str: bytes cannot hold it
        pass


@settings(max_examples=300)
@given(whole=st.integers(min_value=-10**25, max_value=10**25), fraction=st.text("0123456789", min_size=1, max_size=40),
       exponent=st.sampled_from(["", "e5", "E-300", "e+22", "e-0000000000000000000001"]))
def test_long_numbers_read_as_before(whole: int, fraction: str, exponent: str) -> None:
    agree(f'{{"a": [{whole}, {whole}.{fraction}{exponent}, 0.{fraction}]}}')


@pytest.mark.parametrize("text", [
    b"1234567890123456789", b"[1234567890123456789]", b'{"a": -1234567890123456789}', b"[1,12345678901234567890]",
    b'{"a":99999999999999999999999}', b"[0.5, 1234567890123456789]"])
def test_an_integer_of_19_digits_is_left_to_json(text: bytes) -> None:
    # orjson reads an integer past 64 bits as a float: every run of 19 digits not after a point goes the general way.
    assert _fast_parse(text) is None
    assert either(text) == general(text)


@pytest.mark.parametrize("text", [b"[0.1234567890123456789]", b'{"a": 1.12345678901234567890123}', b"[1.5, 123]"])
def test_a_fraction_of_19_digits_is_read_by_orjson(text: bytes) -> None:
    # A fraction's digits are orjson's to round, as json does: only an integer's run of 19 is sent back.
    assert _fast_parse(text) == json.loads(text)


@settings(max_examples=200)
@given(data=st.binary(max_size=40) | st.text(alphabet='{}[]":,0123456789.eE+-natrufls\\ ud8', max_size=40))
def test_any_bytes_read_as_before(data: str | bytes) -> None:
    agree(data)


def load_general(text: bytes) -> tuple[str, Any]:
    """``loads_document`` with the orjson reading switched off."""
    fast, serialize._fast_parse = serialize._fast_parse, lambda _text: None  # type: ignore[assignment]
    try:
        return "ok", loads_document(text)
    except Exception as e:
        return "error", f"{type(e).__name__}: {e}"
    finally:
        serialize._fast_parse = fast  # type: ignore[assignment]


def load_either(text: bytes) -> tuple[str, Any]:
    try:
        return "ok", loads_document(text)
    except Exception as e:
        return "error", f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("path", CORPUS, ids=[str(p.relative_to(ROOT)) for p in CORPUS])
def test_every_corpus_document_loads_identically(path: Path) -> None:
    data = path.read_bytes()
    assert load_either(data) == load_general(data)


@settings(max_examples=40)
@given(p=blueprints())
def test_strategy_programs_load_identically(p: Any) -> None:
    text = dumps(p).encode()
    got = load_either(text)
    assert got == load_general(text)
