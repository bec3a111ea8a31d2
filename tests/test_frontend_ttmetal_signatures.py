"""A device API call with more arguments than the vendor's function takes is refused by name
(``frontends/ttmetal/signatures.py``): it does not compile, and reading it with the extra arguments dropped reads
another kernel than its author's (``noc_semaphore_set_remote(src, dst, noc_index, 2)`` meant a VC-2 flag; ttnn 0.81.1
``tt_metal/hw/inc/api/dataflow/dataflow_api.h:1709-1730`` takes three parameters and always uses the unicast write
VC). The table of the most arguments each function takes is checked against the wheel's headers."""

from __future__ import annotations

import re
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


def _declared_arities(text: str, name: str) -> list[int]:
    """The parameter counts of the declarations and definitions of function ``name`` in C++ ``text`` (a line that
    starts with its return type and qualifiers, the parameter list followed by a body, ``;`` or a qualifier)."""
    found = []
    for m in re.finditer(r"(?m)^[ \t]*[A-Za-z_][\w:<>,\s*&]*?\s+[*&]*" + re.escape(name) + r"\s*\(", text):
        if re.search(r"\breturn\b|=|\bif\b|\bwhile\b", m.group(0)):
            continue  # a call, not a declaration
        depth = angle = commas = 0
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
            elif depth == 1 and not c.isspace():
                seen = True
        params = text[m.end():j].strip()
        after = text[j + 1:j + 100].lstrip()
        if after.startswith(("{", ";", "const", "->", "noexcept")):
            found.append(0 if params in ("", "void") or not seen else commas + 1)
    return found


def test_the_table_is_the_wheels_signatures() -> None:
    """Each entry is the greatest parameter count of the function's declarations in the pinned wheel's device
    headers (its compute and dataflow APIs and the LLK's ``ckernel.h``), and every function the reading follows that
    the wheel declares has an entry."""
    from verispatial.frontends.ttmetal.vendor import wheel_root

    root = wheel_root(download=True)
    if root is None:
        pytest.skip("the ttnn wheel is not available (offline)")
    metal = root / "ttnn" / "tt_metal"
    headers = [*(metal / "hw/inc").rglob("*.h"), *(metal / "hw/inc").rglob("*.hpp"),
               metal / "tt-llk/tt_llk_wormhole_b0/common/inc/ckernel.h"]
    text = "\n".join(p.read_text(errors="replace") for p in headers)
    macros = {"get_compile_time_arg_val": 1}  # #define get_compile_time_arg_val(arg_idx), compile_time_args.h:64
    constructors = {"TensorAccessorArgs": 1}  # explicit TensorAccessorArgs(uint32_t), tensor_accessor_args.h:119
    for name in sorted(api.FUNCTIONS):
        counts = _declared_arities(text, name)
        want = macros.get(name, constructors.get(name, max(counts, default=None)))
        assert signatures.MAX_ARGS.get(name) == want, (name, counts)
