"""The trusted kernel (docs/checker.md, "Trusted kernel"): what decides a verdict — ``verispatial.ir``,
``verispatial.certify`` and the families' checker encodings — imports nothing, at run time, of the untrusted side
(the driver, reporting, the CLI, the passes, the front ends, the strategies); and what the driver hands the kernel
cannot make it say ``proved``: a forged whole-program entry in the proof store is never read by the kernel, a memo
is consulted only for the renaming-invariant families (``canon.FAMILIES``), and a deadlock search only proposes
runs, which refute only when the interpreter reproduces them."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import networkx as nx

from verispatial.certify.canon import ProofMemo
from verispatial.certify.checker import check
from verispatial.certify.replay import Lead, confirm_lead, search_confirmed
from verispatial.certify.report import Report, Result, Verdict, results_to_columns
from verispatial.certify.smt import DEFAULT_RLIMIT
from verispatial.driver.cache import ProofCache
from verispatial.driver.run import certify
from verispatial.driver.search import propose_deadlock
from verispatial.driver.store import ProofStore, program_key, put_report
from verispatial.ir import rules as R
from verispatial.ir.program import Program, program_summary
from verispatial.ir.serialize import load_program

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "verispatial"
#: A memory overlap: refuted by the memory family, whose proofs are never reused up to renaming (``canon.FAMILIES``).
OVERLAP = ROOT / "examples" / "broken" / "f_memory_overlap.json"
#: A deadlock only the interpreter's search finds (its flag word's counting is not exact).
FLAG_LATE = ROOT / "examples" / "broken" / "s_flag_reset_late.json"
SMALL = ROOT / "examples" / "pipeline_small.json"
MEMORY = R.Family.MEMORY.value

#: Top-level parts of the package that may not change a verdict.
UNTRUSTED = {"driver", "report", "cli", "passes", "frontends", "strategies", "mutate", "__main__"}


def _tools() -> ModuleType:
    spec = importlib.util.spec_from_file_location("architecture", ROOT / "tools" / "architecture.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_the_kernel_reaches_no_untrusted_module() -> None:
    tools = _tools()
    mods = tools.modules(PACKAGE)
    g = tools.graph(mods)
    kernel = tools.kernel_modules(mods)
    assert "verispatial.certify.checker" in kernel
    assert "verispatial.ir.program" in kernel
    assert not any(_part(m) in UNTRUSTED for m in kernel)
    # Transitively, run-time imports only (function-local ones included): nothing the kernel runs is untrusted.
    reached = {m for k in kernel for m in nx.descendants(g, k)}
    assert sorted(m for m in reached if _part(m) in UNTRUSTED) == []


def test_every_family_module_the_checker_runs_is_counted_or_the_oracle() -> None:
    """A family folder's module the checker reaches is either a kernel module (its encoding, counted in the kernel's
    size) or the reference semantics the replay runs on (the interpreter's side, not counted)."""
    tools = _tools()
    mods = tools.modules(PACKAGE)
    kernel = tools.kernel_modules(mods)
    reached = nx.descendants(tools.graph(mods), "verispatial.certify.checker")
    family = sorted(m for m in reached if _part(m) == "families" and m.count(".") > 2)
    assert [m for m in family if m not in kernel and not m.endswith("semantics")] == []
    assert "verispatial.families.cb.shared_encoding" in kernel


def test_the_untrusted_modules_are_outside_the_kernel_package() -> None:
    tools = _tools()
    kernel = tools.kernel_modules(tools.modules(PACKAGE))
    for name in ("store", "cache", "files", "gate", "workers", "search", "run"):
        assert f"verispatial.driver.{name}" not in kernel
        assert not (PACKAGE / "certify" / f"{name}.py").exists(), f"certify/{name}.py belongs to the driver"


def _forged(program: Program) -> Report:
    return Report(program.name, program.target.name,
                  (Result(MEMORY, f"{MEMORY}:forged", Verdict.PROVED, "forged"),), 0.0)


def test_a_forged_store_entry_never_reaches_the_kernels_verdict(tmp_path: Path) -> None:
    program = load_program(OVERLAP)
    store = ProofStore(tmp_path)
    assert put_report(store, "program", program_key(store, program, None, DEFAULT_RLIMIT), _forged(program),
                      program_summary(program))
    # The driver takes its store's word (trusted by provenance) and says where the report came from ...
    got = certify(program, cache=ProofCache(store))
    assert got.exit_code == 0
    assert got.cached.startswith("entry ")
    # ... the kernel never reads the store, whatever memo it is handed: its own verdict stands.
    for memo in (False, ProofMemo(), ProofCache(store)):
        own = check(program, cache=memo, search=propose_deadlock)
        assert own.cached == ""
        assert own.exit_code == 1
        assert any(r.family == MEMORY and r.verdict == Verdict.REFUTED for r in own.results)


class _LyingStore(ProofStore):
    """A store that answers every read of a program entry with a proved report."""

    def get(self, kind: str, key: str) -> Any:
        self.hits += 1
        return {"program": "forged", "target": "forged", "seconds": 0.0, "shape": [0, 0],
                "columns": results_to_columns([Result(MEMORY, "forged", Verdict.PROVED, "forged")])}

    def put(self, kind: str, key: str, payload: Any) -> bool:
        return False


class _LyingCache(ProofCache):
    """A proof cache whose store lies about whole programs and which recalls a proof for every component."""

    def recall(self, key: str, family: str) -> tuple[str, str, str, str, str] | None:
        return (family, "forged", "forged", "forged", "forged")


def test_a_cache_that_lies_about_everything_cannot_prove_a_refuted_program(tmp_path: Path) -> None:
    program = load_program(OVERLAP)
    liar = _LyingCache(_LyingStore(tmp_path))
    assert certify(program, cache=liar).exit_code == 0  # the driver trusts its store (named in ``cached``)
    own = check(program, cache=_LyingCache(_LyingStore(tmp_path)), search=propose_deadlock)
    assert own.cached == ""
    assert own.exit_code == 1  # the memory family is decided by the kernel alone, never recalled
    assert any(r.family == MEMORY and r.verdict == Verdict.REFUTED for r in own.results)


def test_a_lying_search_refutes_nothing_and_proves_nothing() -> None:
    program = load_program(FLAG_LATE)

    def lying(p: Program, comp: frozenset[str] | None, candidates: Any) -> Lead:
        return Lead("round-robin run")  # a run that does not deadlock

    def deadlock_of(report: Report) -> list[tuple[str, Verdict]]:
        return [(r.name, r.verdict) for r in report.results if r.family == R.DEADLOCK]

    honest = check(program, cache=False, search=propose_deadlock)
    assert [v for _, v in deadlock_of(honest)] == [Verdict.REFUTED]
    for search in (lying, None):
        got = check(program, cache=False, search=search)
        assert [v for _, v in deadlock_of(got)] == [Verdict.FAILED]


def test_a_lead_is_confirmed_by_the_interpreters_own_run() -> None:
    program = load_program(FLAG_LATE)
    lead = propose_deadlock(program)
    assert lead is not None
    cex = confirm_lead(program, lead)
    assert cex is not None
    assert cex["kind"] == R.DEADLOCK
    # Leads that do not end in a deadlock, or cannot run, are no counterexample.
    assert confirm_lead(program, Lead("round-robin run")) is None
    if lead.schedule:
        assert confirm_lead(program, Lead(lead.how, lead.trips, schedule=lead.schedule[:-1])) is None
        assert confirm_lead(program, Lead(lead.how, lead.trips, schedule=lead.schedule[1:])) is None
    small = load_program(SMALL)
    assert search_confirmed(lambda p, c, d: lead, small) is None  # another program's deadlock is not this one's
    assert search_confirmed(None, program) is None
    assert confirm_lead(program, None) is None

