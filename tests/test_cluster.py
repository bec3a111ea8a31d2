"""The gate on a Dask distributed cluster (``gate(..., scheduler=ADDRESS)``, ``verispatial gate --scheduler``):
the same outcomes as one process and as ``--jobs``, the proof store shared by the workers, and an unreachable
scheduler reported as bad input naming ``--scheduler``.

Each test starts a local cluster of two worker processes (an existing engine: ``distributed.LocalCluster``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_proofs_gate import NO_BARRIER, OVERLAP, SMALL, corpus

from verispatial.cli import main
from verispatial.driver import cluster
from verispatial.driver.gate import GateRun, gate
from verispatial.driver.store import ProofStore
from verispatial.errors import ParseError

distributed = pytest.importorskip("distributed", reason="Dask distributed is not installed (the test extra has it)")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::ResourceWarning",
                                        "ignore::pytest.PytestUnraisableExceptionWarning", "ignore::UserWarning")


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """The address of a local Dask cluster: two single-threaded worker processes, no dashboard."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as lc:
            yield lc.scheduler_address


def _summary(run: GateRun) -> list[tuple[str, str, str]]:
    """Per program: name, status, and the verdicts of its report's results (the outcome a verdict depends on)."""
    out = []
    for o in run.outcomes:
        verdicts = "" if o.report is None else ",".join(sorted(f"{r.name}={r.verdict.value}"
                                                                for r in o.report.results))
        out.append((o.name, o.status, verdicts))
    return out


def test_the_cluster_gives_the_outcomes_of_one_process_and_of_jobs(tmp_path: Path, scheduler: str) -> None:
    d = corpus(tmp_path, (SMALL, NO_BARRIER, OVERLAP))
    alone = gate(d)
    pooled = gate(d, jobs=2)
    on_cluster = gate(d, scheduler=scheduler)
    assert on_cluster.ok
    assert alone.ok
    assert _summary(on_cluster) == _summary(alone) == _summary(pooled)
    assert {o.status for o in on_cluster.outcomes} == {"holds"}


def test_workers_share_the_proof_store(tmp_path: Path, scheduler: str) -> None:
    d = corpus(tmp_path, (SMALL, OVERLAP))
    store = tmp_path / "cache"
    cold = gate(d, store=ProofStore(store), scheduler=scheduler)
    warm = gate(d, store=ProofStore(store), scheduler=scheduler)
    assert cold.ok
    assert warm.ok
    assert [(o.name, o.status) for o in cold.outcomes] == [(o.name, o.status) for o in warm.outcomes]
    # The second run finds what the first run's workers stored: the proof from the cache, the refutation replayed
    # from its recorded candidate; nothing is computed from scratch again.
    assert {o.name: o.how for o in cold.outcomes} == {SMALL: "computed", OVERLAP: "computed"}
    assert {o.name: o.how for o in warm.outcomes} == {SMALL: "cache", OVERLAP: "replayed"}


def test_an_unreachable_scheduler_is_bad_input_naming_the_option(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1)
    d = corpus(tmp_path, (SMALL,))
    with pytest.raises(ParseError) as e:
        gate(d, scheduler="tcp://127.0.0.1:9")
    assert e.value.field == "--scheduler"
    assert "cannot reach the Dask scheduler" in e.value.rule


def test_the_command_line_runs_the_gate_on_the_cluster(tmp_path: Path, scheduler: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    d = corpus(tmp_path, (SMALL, OVERLAP))
    assert main(["gate", str(d), "--scheduler", scheduler, "--no-cache", "-q"]) == 0
    assert "gate: 2 passed, 0 failed" in capsys.readouterr().out


def test_the_command_line_refuses_an_unreachable_scheduler_in_one_line(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1)
    d = corpus(tmp_path, (SMALL,))
    assert main(["gate", str(d), "--scheduler", "tcp://127.0.0.1:9", "--no-cache", "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("verispatial: error: --scheduler: cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'")
    assert main(["gate", str(d), "--scheduler", "tcp://127.0.0.1:9", "--jobs", "2", "-q"]) == 2
    assert "--jobs" in capsys.readouterr().err


@pytest.mark.parametrize("address", ["nonsense", "tcp://", "tcp://host:port", "ftp://127.0.0.1:9",
                                     "tcp://127.0.0.1:99999"])
def test_a_malformed_address_is_refused_at_once_in_a_subprocess_without_a_traceback(tmp_path: Path,
                                                                                     address: str) -> None:
    # A fresh user's find: `--scheduler nonsense` printed the error, then hung 20 s in the Client's finalizer and
    # printed its traceback. Now the address is parsed before any Client exists or any program is read.
    import subprocess
    import sys

    d = corpus(tmp_path, (SMALL,))
    run = subprocess.run([sys.executable, "-m", "verispatial", "gate", str(d), "--scheduler", address, "--no-cache",
                          "-q"], capture_output=True, text=True, check=False, timeout=120)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith("verispatial: error: --scheduler: "), run.stderr
    assert "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("address", ["nonsense", "tcp://127.0.0.1:99999"])
def test_a_malformed_address_is_refused_before_any_client_exists(tmp_path: Path, address: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """What the 20 s hang came from, asserted without a clock: no ``distributed.Client`` is made (its finalizer
    waited and printed a traceback) and no program is read before the address is refused."""
    import distributed

    made: list[object] = []
    monkeypatch.setattr(distributed, "Client", lambda *a, **k: made.append(a))
    d = corpus(tmp_path, (SMALL,))
    assert main(["gate", str(d), "--scheduler", address, "--no-cache", "-q"]) == 2
    assert made == []


def test_host_and_port_get_the_default_scheme() -> None:
    assert cluster.scheduler_address("127.0.0.1:8786") == "tcp://127.0.0.1:8786"
    assert cluster.scheduler_address("tls://h:1") == "tls://h:1"
    with pytest.raises(ParseError, match="not a scheduler address"):
        cluster.scheduler_address("nonsense")
