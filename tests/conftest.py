"""Hypothesis profiles shared by the property-based tests (``HYPOTHESIS_PROFILE``; README "Property tests").

- ``dev``: 50 examples, random seeds (quick local iteration: ``HYPOTHESIS_PROFILE=dev``).
- ``ci``: 1,000 examples, derandomized (every run tests the same programs, so a failure reproduces exactly). It is
  the default, because CI (``.ci/run``) runs plain ``python -m pytest -q``: the differential test
  (``test_differential.py``) checks 600 random programs against the explorer there
  (the ``thorough`` profile's 20,000 are the long run). Tests whose examples cost
  more take a share of it (``settings().max_examples // k``) or a count of their own.
- ``thorough``: 20,000 examples, random seeds, for hunting checker/oracle disagreements (benchmarks/README.md
  records its last run).

No deadline: one example runs the explicit-state explorer and the Z3 checker, whose time varies with the program.

Every test runs with its own empty persistent proof cache (``_own_proof_cache``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("ci", max_examples=1000, deadline=None, derandomize=True)
settings.register_profile("thorough", max_examples=20_000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _own_proof_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets an empty persistent proof cache of its own (``VERISPATIAL_CACHE_DIR``): the CLI's default
    cache is the user's, which a test must neither read (a proof from another run) nor fill."""
    monkeypatch.setenv("VERISPATIAL_CACHE_DIR", str(tmp_path_factory.mktemp("proof-cache")))


@pytest.fixture(autouse=True)
def _z3_argument_checks() -> None:
    """z3py's argument assertions on in every test (``verispatial.certify.smt`` turns them off for speed: they
    create no term), so a term built from mixed sorts or contexts fails here."""
    import z3.z3

    z3.z3.Z3_DEBUG = True


_EXAMPLE_REPORTS: dict[str, Any] = {}


@pytest.fixture(scope="session")
def example_reports() -> dict[str, Any]:
    """The checker's reports on the shipped examples, by path, shared by every module that certifies them (each
    example at most once per session: the big ones take seconds)."""
    return _EXAMPLE_REPORTS


@pytest.fixture(scope="module")
def ttnn_cpp() -> Path:
    """The pinned ttnn wheel's ``ttnn/ttnn/cpp`` (kernel sources and device headers), downloaded into the user cache
    on first use (``verispatial.frontends.ttmetal.vendor``); the test is skipped when it is not cached and cannot be
    downloaded (offline)."""
    from verispatial.frontends.ttmetal.vendor import TTNN_VERSION, wheel_root

    root = wheel_root(download=True)
    if root is None:
        pytest.skip(f"the ttnn {TTNN_VERSION} wheel is not cached and could not be downloaded (offline?)")
    return root / "ttnn" / "ttnn" / "cpp"
