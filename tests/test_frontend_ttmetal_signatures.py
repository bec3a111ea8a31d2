"""A device API call with a number of arguments no overload of the vendor's function takes is refused by name
(``frontends/ttmetal/signatures.py``): it does not compile, and reading it with the extra arguments dropped reads
another kernel than its author's (``noc_semaphore_set_remote(src, dst, noc_index, 2)`` meant a VC-2 flag; ttnn 0.81.1
``tt_metal/hw/inc/api/dataflow/dataflow_api.h:1709-1730`` takes three parameters and always uses the unicast write
VC). The table of each function's overloads' argument counts is checked against the wheel's headers."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from tests.test_frontend_ttmetal_remote import FIRST, _host, _refused
from verispatial.frontends.ttmetal import api, import_host, signatures

_SET_REMOTE = "    noc_semaphore_set_remote(get_semaphore(0), get_noc_addr(1, 0, get_semaphore(0)), noc_index{});"


@pytest.mark.parametrize(("call", "name"), [
    (_SET_REMOTE.format(", 2"), "noc_semaphore_set_remote"),
    ("    cb_reserve_back(0, 1, 2);", "cb_reserve_back"),
    ("    noc_async_read_barrier(noc_index, 1);", "noc_async_read_barrier"),
    # the object API's methods
    ("    DataflowBuffer dfb(0); dfb.reserve_back(1, 2);", "DataflowBuffer.reserve_back"),
    ("    Noc noc; noc.async_full_barrier(1);", "Noc.async_full_barrier"),
    ("    Semaphore sm(0); sm.set(1, 2);", "Semaphore.set"),
])
def test_a_call_with_more_arguments_than_the_vendor_takes_is_refused(tmp_path: Path, call: str, name: str) -> None:
    path = _host(tmp_path, {"sender": ("reader", (call,))}, {"0,0": ("sender",), "1,0": ()})
    e = _refused(path, f"call to {name} with more arguments than it takes", "sender.cpp", FIRST)
    assert "takes at most" in str(e)


def test_the_same_call_with_the_vendors_arguments_is_read(tmp_path: Path) -> None:
    path = _host(tmp_path, {"sender": ("reader", (_SET_REMOTE.format(""),))}, {"0,0": ("sender",), "1,0": ()})
    assert import_host(path).programs


#: calls whose count no overload takes though it is within the most any takes, and too few: ``sem.up(noc, x, y)``
#: (``Semaphore::up`` takes ``(value)`` or ``(noc, x, y, value[, vc])``, api/semaphore.h:93, 197-202; it was read as
#: ``up(value)`` with the Noc as the value) and ``get_noc_addr(x, y, addr, noc, 7)`` (the coordinates overload takes
#: 3 or 4, dataflow_api_addrgen.h:209; the address-generator overload's 5, :413-419, let it through)
NO_OVERLOAD = [
    ("    Noc noc; Semaphore sm(0); sm.up(noc, 1, 0);", "Semaphore.up with a number of arguments no overload of it "
     "takes", "3 arguments, but the vendor's Semaphore.up takes 1, 4 or 5"),
    ("    Noc noc; Semaphore sm(0); sm.up(noc, 1);", "Semaphore.up with a number of arguments no overload of it takes",
     "2 arguments, but the vendor's Semaphore.up takes 1, 4 or 5"),
    ("    Semaphore sm(0); sm.up();", "Semaphore.up with fewer arguments than it takes",
     "0 arguments, but the vendor's Semaphore.up takes 1, 4 or 5"),
    ("    uint64_t a = get_noc_addr(1, 0, get_semaphore(0), noc_index, 7);",
     "get_noc_addr with more arguments than it takes",
     "5 arguments, but the vendor's get_noc_addr(x, y, addr[, noc]) takes at most 4"),
]


@pytest.mark.parametrize(("call", "construct", "detail"), NO_OVERLOAD)
def test_a_call_no_overload_takes_is_refused_naming_the_counts(tmp_path: Path, call: str, construct: str,
                                                              detail: str) -> None:
    path = _host(tmp_path, {"sender": ("reader", (call,))}, {"0,0": ("sender",), "1,0": ()})
    e = _refused(path, f"call to {construct}", "sender.cpp", FIRST)
    assert detail in str(e), e


def test_the_overloads_counts_are_read(tmp_path: Path) -> None:
    """``sem.up(noc, x, y, 1, vc)``, ``get_noc_addr(x, y, addr, noc)`` and ``get_noc_addr(addr)`` are the vendor's."""
    calls = ("    Noc noc; Semaphore sm(0); sm.up(noc, 1, 0, 1, 3);",
             "    uint64_t a = get_noc_addr(1, 0, get_semaphore(0), noc_index);",
             "    uint64_t b = get_noc_addr(get_semaphore(0));")
    for i, call in enumerate(calls):
        (tmp_path / str(i)).mkdir()
        path = _host(tmp_path / str(i), {"sender": ("reader", (call,))}, {"0,0": ("sender",), "1,0": ()})
        assert import_host(path).programs


def _declared_arities(text: str, name: str) -> list[tuple[int, int]]:
    """The argument counts of the declarations and definitions of function ``name`` in C++ ``text`` (a line that
    starts with its return type and qualifiers, the parameter list followed by a body, ``;`` or a qualifier): per
    declaration, its parameters without a default and all of them."""
    found = []
    for m in re.finditer(r"(?m)^[ \t]*[A-Za-z_][\w:<>,\s*&]*?\s+[*&]*" + re.escape(name) + r"\s*\(", text):
        if re.search(r"\breturn\b|=|\bif\b|\bwhile\b", m.group(0)):
            continue  # a call, not a declaration
        depth = angle = commas = defaults = 0
        seen = False
        for j in range(m.end() - 1, len(text)):
            c = text[j]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    break
            elif depth == 1 and c == "<":
                angle += 1
            elif depth == 1 and c == ">":
                angle = max(0, angle - 1)
            elif depth == 1 and c == "," and not angle:
                commas += 1
            elif depth == 1 and c == "=" and not angle:
                defaults += 1
            elif depth == 1 and not c.isspace():
                seen = True
        params = text[m.end():j].strip()
        after = text[j + 1:j + 100].lstrip()
        if after.startswith(("{", ";", "const", "->", "noexcept")):
            count = 0 if params in ("", "void") or not seen else commas + 1
            found.append((count - defaults, count))
    return found


def _allowed(arities: Iterable[tuple[int, int]]) -> set[int]:
    return {k for lo, hi in arities for k in range(lo, hi + 1)}


def _headers() -> tuple[Path, str]:
    from verispatial.frontends.ttmetal.vendor import wheel_root

    root = wheel_root(download=True)
    if root is None:
        pytest.skip("the ttnn wheel is not available (offline)")
    metal = root / "ttnn" / "tt_metal"
    headers = [*(metal / "hw/inc").rglob("*.h"), *(metal / "hw/inc").rglob("*.hpp"),
               metal / "tt-llk/tt_llk_wormhole_b0/common/inc/ckernel.h"]
    return metal / "hw/inc", "\n".join(p.read_text(errors="replace") for p in headers)


def test_the_table_is_the_wheels_signatures() -> None:
    """Each entry allows the argument counts of the function's declarations in the pinned wheel's device headers
    (its compute and dataflow APIs and the LLK's ``ckernel.h``), defaults included, and every function the reading
    follows that the wheel declares has an entry."""
    _, text = _headers()
    macros = {"get_compile_time_arg_val": {1}}  # #define get_compile_time_arg_val(arg_idx), compile_time_args.h:64
    # TensorAccessorArgs() and explicit TensorAccessorArgs(uint32_t), tensor_accessor_args.h:118-119
    constructors = {"TensorAccessorArgs": {0, 1}}
    for name in sorted(api.FUNCTIONS):
        counts = _declared_arities(text, name)
        want = macros.get(name, constructors.get(name, _allowed(counts) or None))
        got = signatures.ARITIES.get(name)
        assert (got and _allowed(got)) == want, (name, counts)
    # get_noc_addr's forms are its free overloads (the accessors' get_noc_addr members aside)
    assert _allowed(signatures.NOC_ADDR_FORMS.values()) == _allowed(signatures.ARITIES["get_noc_addr"])


def test_the_method_table_is_the_wheels_signatures() -> None:
    inc, _ = _headers()
    files = {"DataflowBuffer": ("api/dataflow/dataflow_buffer.h", "api/dataflow/circular_buffer.h"),
             "Noc": ("api/dataflow/noc.h",), "Semaphore": ("api/semaphore.h",)}
    for receiver, names in files.items():
        text = "\n".join((inc / f).read_text() for f in names)
        for name, arities in signatures.METHOD_ARITIES[receiver].items():
            counts = _declared_arities(text, name)
            if counts:
                assert _allowed(arities) == _allowed(counts), (receiver, name, counts)
    # Semaphore's methods carry __attribute__((always_inline)) before their type, which the pattern above skips
    semaphore = (inc / "api/semaphore.h").read_text()
    up = [m.start() for m in re.finditer(r"void up\(", semaphore)]
    assert len(up) == 2
    assert "std::uint8_t vc = NOC_UNICAST_WRITE_VC)" in semaphore[up[1]:up[1] + 300]
    assert _allowed(signatures.METHOD_ARITIES["Semaphore"]["up"]) == {1, 4, 5}
