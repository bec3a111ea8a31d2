"""The text of ``verispatial throughput``: cycles per work item, the critical cycle of the marked graph (each op on it
and the dependency that leads to the next), and the latencies used with their sources."""

from __future__ import annotations

from typing import Any

from verispatial.petri.interp import SimResult
from verispatial.petri.throughput import Bound

#: Ops of the critical cycle printed at most (a cycle through an unrolled loop repeats the same ops).
CYCLE_LINES = 24


def bound_lines(b: Bound) -> list[str]:
    """The human report of a throughput bound (units: cycles of the target's clock; a work item is one run)."""
    trips = " ".join(f"{k}={v}" for k, v in sorted(b.trips.items()))
    exact = "" if b.cycles.denominator == 1 else f" ({b.cycles.numerator}/{b.cycles.denominator})"
    out = [f"program {b.program}: at least {float(b.cycles):.1f} cycles per work item{exact}"
           + (f" (trips {trips})" if trips else ""),
           f"  marked graph: {b.transitions} transitions (op occurrences of one run), {b.places} places",
           f"  critical cycle: {len(b.critical)} ops, {b.weight} cycles over {b.tokens} token(s)"]
    engines = sorted({o.engine for o, _e in b.critical})
    out.append(f"  through {', '.join(engines)}")
    for o, e in b.critical[:CYCLE_LINES]:
        out.append(f"    {o.text()}  --[{e.why}: {e.weight} cycles" + (f", {e.tokens} token(s)" if e.tokens else "")
                   + "]-->")
    if len(b.critical) > CYCLE_LINES:
        out.append(f"    (+{len(b.critical) - CYCLE_LINES} more ops on the cycle)")
    out.append("  latencies (cycles): " + ", ".join(f"{k}={v}" for k, v in b.to_json()["latencies"].items()))
    out += [f"    {k}: {v}" for k, v in sorted(b.latencies.sources.items())]
    return out


def no_bound_json(program: str, exit_code: int, reason: str, run: SimResult | None = None) -> dict[str, Any]:
    """The ``throughput --json`` document when there is no bound: ``exit_code`` (1: the interpreter's run does not
    terminate, so the program is not live; 3: no bound could be derived), the one-line ``reason`` the command also
    prints on stderr, ``bound`` null and, for a run that did not terminate, its ``status``, ``trips`` and the
    ``stuck`` engines (each ``position`` and ``reason``)."""
    out: dict[str, Any] = {"program": program, "exit_code": exit_code, "bound": None, "reason": reason}
    if run is not None:
        out["run"] = {"status": run.status, "trips": dict(run.trips), "stuck": [st.to_json() for st in run.stuck]}
    return out
