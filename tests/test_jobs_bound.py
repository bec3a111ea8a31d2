"""``--jobs N`` starts no more worker processes than there is work for.

A forked ``ProcessPoolExecutor`` starts all of its ``max_workers`` at the first task: ``certify
examples/counter_release.json --jobs 100000`` forked processes until the machine's load average passed 400 and gave
no verdict in 120 s (one program of nine obligation families). Each pool is now asked for at most one worker per
task it is given: families of one program, slices of a composed one, programs of a gate."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from verispatial.cli import main
from verispatial.driver import workers

ROOT = Path(__file__).resolve().parent.parent
JOBS = 100_000


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pool sizes asked of ``worker_pool``, each pool then made of at most two workers (the test's own bound)."""
    sizes: list[int] = []
    real = workers.worker_pool

    @contextlib.contextmanager
    def recording(jobs: int) -> Iterator[ProcessPoolExecutor]:
        sizes.append(jobs)
        with real(min(jobs, 2)) as pool:
            yield pool

    monkeypatch.setattr(workers, "worker_pool", recording)
    monkeypatch.setattr("verispatial.driver.run.worker_pool", recording)
    return sizes


@pytest.mark.parametrize("example", ["counter_release.json", "three_sections.json"], ids=["families", "slices"])
def test_certify_asks_for_a_worker_per_task_at_most(example: str, asked: list[int],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", str(ROOT / "examples" / example), "--jobs", str(JOBS), "--no-cache", "-q"]) == 0
    capsys.readouterr()
    assert asked
    assert max(asked) <= 20  # the kernel's obligation families; three_sections has 3 slices


def test_gate_asks_for_a_worker_per_program_at_most(tmp_path: Path, asked: list[int],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("counter_release", "forwarder"):
        for kind in ("program", "certificate"):
            shutil.copy(ROOT / "proofs" / "examples" / f"{name}.{kind}.json", tmp_path / f"{name}.{kind}.json")
    assert main(["gate", str(tmp_path), "--jobs", str(JOBS), "--no-cache", "-q"]) == 0
    capsys.readouterr()
    assert asked == [2]
