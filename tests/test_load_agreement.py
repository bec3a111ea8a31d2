"""Loading keeps its answer whatever its fast paths: a document edited at random is accepted or refused, with the same
message, by ``loads_document`` as it is and by the plain path — the program schema compiled as shipped (no dispatch
rewritten, ``serialize.dispatch_trees``) and ``validate`` with every fast path off (no ``_quick`` predicate, no op
passed over as quiet, no semaphore op by ``_sem_passes``, no transfer by ``_transfer_passes``, no multicast by
``_mcast_passes``, no accumulator acquire by ``_acc_passes``, no source location by ``_check_sources``' quick test, no
shards told apart by ``_shard_tile_set``, no program's semaphore slots left uncounted). Nothing malformed gets in by a
fast path, and no message changes with one."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
from hypothesis import given, settings
from hypothesis import strategies as st
from test_loader import _paths
from test_validate_rules import fast_paths_off

from verispatial.errors import InvalidProgram, ParseError
from verispatial.ir import serialize

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
#: Small examples of every kind of op and entity: multicast, semaphores (read-modify-writes, inline writes), scratch,
#: sections, indirect addresses, source locations (the vendor ones), local copies, sharded buffers.
DOCUMENTS = [json.loads((EXAMPLES / f"{name}.json").read_text()) for name in (
    "pipeline_small", "forwarder", "counter_release", "scratch_slices", "three_sections", "valid_source",
    "kv_cache_update", "all_to_all_read", "local_up", "vendor_receiver", "remote_write", "mcast_pair",
    "vendor/dispatch_mailbox", "vendor/contributed_multicast", "vendor/sort_exchange_wait_min", "local_copy",
    "vendor/eltwise_binary_sharded")]


@contextlib.contextmanager
def plain_path() -> Iterator[None]:
    """``loads_document`` with the shipped schema compiled as it is and every fast path of ``validate`` off."""
    shipped = jsonschema_rs.validator_for(serialize.schema())
    saved = serialize._program_validator
    serialize._program_validator = lambda: shipped  # type: ignore[assignment]
    try:
        with fast_paths_off():
            yield
    finally:
        serialize._program_validator = saved  # type: ignore[assignment]


def outcome(text: bytes) -> tuple[str, Any]:
    """What loading ``text`` gives: the program written back, or the kind and message of the refusal (each violation
    of an invalid program)."""
    try:
        return "loaded", serialize.program_to_dict(serialize.loads_document(text))
    except InvalidProgram as e:  # every violation, in order, not only the first
        return "InvalidProgram", [str(v) for v in e.violations]
    except ParseError as e:
        return "ParseError", str(e)


#: Values an edit puts in: the boundaries of ids, counts and 32-bit words, names a document uses and does not, sites,
#: and values of the wrong JSON kind.
VALUES = (st.sampled_from([-1, 0, 1, 2, 3, 7, 99, 65535, 65536, 2**20, 2**32 - 1, 2**32, 2.0, 0.5]) | st.sampled_from(
    ["", "k", "i", "X", "A", "C", "bf16", "fp32", "nope", "reader", "compute", "local", "eq", "push", "loop",
     "read_tiles", "sem_set", "input", "output"]) | st.sampled_from([None, True, False, [], {}, [0, 0], [1, 0], [9, 9],
                                                                     {"var": "k", "coef": 1}, {"var": "zz", "coef": 1}]))


def _field_values(x: Any, out: dict[str, set[str]]) -> dict[str, set[str]]:
    """Per object key, every value it holds in ``x`` (as JSON text)."""
    if isinstance(x, dict):
        for k, v in x.items():
            out.setdefault(k, set()).add(json.dumps(v))
            _field_values(v, out)
    elif isinstance(x, list):
        for v in x:
            _field_values(v, out)
    return out


#: Per object key, the values it takes anywhere in the documents (a role, a buffer id, a site, an address, an op).
FIELD_VALUES: dict[str, list[Any]] = {
    k: [json.loads(v) for v in sorted(vs, key=lambda v: (len(v), v))[:40]]
    for k, vs in _field_values(DOCUMENTS, {}).items()}


@settings(max_examples=max(100, settings().max_examples // 2))
@given(st.data())
def test_random_edits_load_alike_by_the_fast_and_the_plain_path(data: st.DataObject) -> None:
    """Each edit picks a field name of the document, one of its places, and a value: one the field takes somewhere in
    the documents (another role, buffer, site, address or op), a boundary or a value of another kind; or drops the
    field, or adds one."""
    d = copy.deepcopy(data.draw(st.sampled_from(DOCUMENTS)))
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(d) if p and isinstance(p[-1], str) and p[0] not in ("format", "version")]
        if not paths:
            break
        key = data.draw(st.sampled_from(sorted({p[-1] for p in paths})))
        path = data.draw(st.sampled_from([p for p in paths if p[-1] == key]))
        parent: Any = d
        for k in path[:-1]:
            parent = parent[k]
        how = data.draw(st.sampled_from(["like", "like", "like", "set", "delete", "add"]))
        if how == "like" and key in FIELD_VALUES:
            parent[key] = copy.deepcopy(data.draw(st.sampled_from(FIELD_VALUES[key])))
        elif how in ("like", "set"):
            parent[key] = copy.deepcopy(data.draw(VALUES))  # a list or object of VALUES may be edited later
        elif how == "delete":
            del parent[key]
        else:
            parent[data.draw(st.sampled_from(["extra", "part", "dst", "terms", "in_place", "sources"]))] = \
                copy.deepcopy(data.draw(VALUES))
    text = json.dumps(d).encode()
    fast = outcome(text)
    with plain_path():
        plain = outcome(text)
    assert fast == plain, text[:400]


def test_every_example_loads_alike_by_the_fast_and_the_plain_path() -> None:
    for path in [*sorted(EXAMPLES.glob("*.json")), *sorted((EXAMPLES / "broken").glob("*.json"))]:
        text = path.read_bytes()
        fast = outcome(text)
        with plain_path():
            assert outcome(text) == fast, path.name
