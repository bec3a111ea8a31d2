"""A front end never writes a program its own loader rejects (found by a new user: ``noc_semaphore_inc(addr, 0)``
became a ``sem_inc`` of ``by: 0``, which the program schema bounds at 1, so ``import ttmetal`` wrote a file
``validate`` refused and ``certify HOST.yaml`` named a temporary file). The increment of 0 is refused by name at its
line; every other value the schema bounds is caught by ``serialize.schema_violations`` and named at the op's line."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from verispatial.cli import main
from verispatial.ir.ops import Loop, SemInc
from verispatial.ir.serialize import load_program, schema_violations

ROOT = Path(__file__).resolve().parent.parent

_SENDER = """#include <stdint.h>
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    uint32_t ready_addr = get_semaphore(get_compile_time_arg_val(0));
    volatile tt_l1_ptr uint32_t* ready = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(ready_addr);
    noc_semaphore_wait(ready, 1);
}
"""

_RECV = """#include <stdint.h>
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"
#include "api/semaphore.h"
void kernel_main() {
    uint32_t by = get_arg_val<uint32_t>(0);
    uint32_t ready_addr = get_semaphore(get_compile_time_arg_val(0));
    Semaphore<> rs(get_compile_time_arg_val(0));
    Noc noc;
    %s
    noc_async_atomic_barrier();
}
"""
#: the line of the increment in ``_RECV``
LINE = 10


def _host(tmp_path: Path, inc: str, by: int) -> Path:
    """(0,0) waits for its word ``ready`` to reach 1; (1,0) increments it with ``inc`` (runtime arg ``by``)."""
    (tmp_path / "sender.cpp").write_text(_SENDER)
    (tmp_path / "recv.cpp").write_text(_RECV % inc)
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "inc", "kernel_root": str(tmp_path),
            "buffers": [], "semaphores": [{"name": "ready", "initial_value": 0}],
            "kernels": [{"name": "sender", "source": "sender.cpp", "processor": "reader",
                         "compile_time_args": [{"semaphore": "ready"}]},
                        {"name": "recv", "source": "recv.cpp", "processor": "reader", "runtime_args": ["by"],
                         "compile_time_args": [{"semaphore": "ready"}]}],
            "work_units": [{"cores": "0,0", "kernels": ["sender"]},
                           {"cores": "1,0", "kernels": ["recv"], "runtime_args": {"recv": {"by": by}}}]}
    path = tmp_path / "host.yaml"  # JSON is YAML
    path.write_text(json.dumps(host))
    return path


INCREMENTS = ["noc_semaphore_inc(get_noc_addr(0, 0, ready_addr), %s);", "rs.up(noc, 0, 0, %s);"]


@pytest.mark.parametrize("inc", INCREMENTS)
@pytest.mark.parametrize("value", ["0", "by"])
def test_an_increment_of_zero_is_refused_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     inc: str, value: str) -> None:
    pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra")
    host = _host(tmp_path, inc % value, 0)
    out = tmp_path / "program.json"
    assert main(["import", "ttmetal", str(host), "-o", str(out)]) == 2
    assert not out.exists()
    err = capsys.readouterr().err
    assert f"recv.cpp:{LINE}: semaphore increment of 0" in err, err
    assert main(["certify", str(host), "-q", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert f"recv.cpp:{LINE}: semaphore increment of 0" in err, err
    assert "verispatial-ttmetal-" not in err, err


@pytest.mark.parametrize("inc", INCREMENTS)
def test_an_increment_of_one_reads_and_proves(tmp_path: Path, capsys: pytest.CaptureFixture[str], inc: str) -> None:
    pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra")
    assert main(["certify", str(_host(tmp_path, inc % "by", 1)), "-q", "--no-cache"]) == 0, capsys.readouterr()


def test_schema_violations_name_the_op_that_breaks_the_schema() -> None:
    """A value only the schema bounds (a ``sem_inc`` by 0 inside a loop) is named by its engine program and op path,
    which a front end turns into the source line; a program that loads has none."""
    p = load_program(ROOT / "examples" / "mcast_pair.json")
    assert schema_violations(p) == []
    for ep in p.programs:
        for j, op in enumerate(ep.ops):
            if isinstance(op, Loop):
                for k, inner in enumerate(op.body):
                    if isinstance(inner, SemInc):
                        body = (*op.body[:k], attrs.evolve(inner, by=0), *op.body[k + 1:])
                        ops = (*ep.ops[:j], attrs.evolve(op, body=body), *ep.ops[j + 1:])
                        programs = tuple(attrs.evolve(e, ops=ops) if e is ep else e for e in p.programs)
                        (v,) = schema_violations(attrs.evolve(p, programs=programs))
                        assert (v.engine, v.path) == (ep.key, (j, k)), v
                        assert v.rule == "0 is less than the minimum of 1", v
                        assert v.entity.endswith(".by"), v
                        return
    pytest.fail("no sem_inc inside a loop in examples/mcast_pair.json")
