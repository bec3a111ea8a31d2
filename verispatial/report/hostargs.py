"""A counterexample's trips as the host arguments they stand for (tt-metal host descriptions, docs/ttmetal.md).

A runtime or compile-time arg the host description gives as a range ``lo..hi`` is read as a trip ``t`` in
``[0, hi - lo]`` plus ``lo`` (``frontends/ttmetal/host.py``, ``TripRange``): the checker's counterexample says
``num_tiles=0`` where the engineer's kernel read ``num_tiles = 1``. ``with_host_args`` adds, beside every ``trips``
object of a counterexample, a ``host_args`` list naming each argument of the trips set, its value and the host field
it came from; the text report, JUnit, SARIF and explain print its ``text``:

    num_tiles = 3 from host.yaml: kernels.reader.runtime_args (range 3..4 in work_units[0]; trip num_tiles = 0 in
    program.json)

Untrusted presentation only, as ``sources.py``: fields added after every verdict is settled, none changed.
"""

from __future__ import annotations

from typing import Any

import attrs

from verispatial.certify.report import Report


@attrs.frozen
class _Arg:
    """One host argument given as a range: how the kernel names it, the kernel reading it, the host field naming it
    (``from``), the fields giving the range (``fields``; ``units`` the work units among them) and its trip."""

    name: str
    kernel: str
    origin: str
    fields: tuple[str, ...]
    units: tuple[str, ...]
    trip: str
    lo: int
    hi: int


def _ranged_args(spec: Any, host_label: str) -> list[_Arg]:
    """Every argument of ``spec`` (a ``HostSpec``) whose value is a range, in the host file's order: the kernels'
    compile-time args, then their runtime args and varargs (one entry per kernel and arg, with every work unit
    giving it a range)."""
    from verispatial.frontends.ttmetal.host import TripRange

    out: list[_Arg] = []
    for i, k in enumerate(spec.kernels):
        for j, v in enumerate(k.compile_time_args):
            if isinstance(v, TripRange):
                out.append(_Arg(f"get_compile_time_arg_val({j})", k.name,
                                f"{host_label}: kernels.{k.name}.compile_time_args[{j}]",
                                (f"kernels[{i}].compile_time_args[{j}]",), (), v.trip, v.lo, v.hi))
        for n, v in k.named_compile_time_args.items():
            if isinstance(v, TripRange):
                out.append(_Arg(n, k.name, f"{host_label}: kernels.{k.name}.named_compile_time_args.{n}",
                                (f"kernels[{i}].named_compile_time_args.{n}",), (), v.trip, v.lo, v.hi))
    by_key: dict[tuple[str, str, str], _Arg] = {}
    for u, unit in enumerate(spec.work_units):
        given: list[tuple[str, str, str, str, Any]] = []  # (name, kernel, origin, host field, value)
        for kname, args in unit.runtime_args.items():
            given += [(a, kname, f"{kname}.runtime_args", f"work_units[{u}].runtime_args.{kname}.{a}", v)
                      for a, v in args.items()]
        for kname, vals in unit.varargs.items():
            given += [(f"get_vararg({j})", kname, f"{kname}.varargs", f"work_units[{u}].varargs.{kname}[{j}]", v)
                      for j, v in enumerate(vals)]
        for name, kname, origin, field, v in given:
            if not isinstance(v, TripRange):
                continue
            key = (origin, name, v.trip)
            old = by_key.get(key)
            if old is None:
                by_key[key] = _Arg(name, kname, f"{host_label}: kernels.{origin}", (field,), (f"work_units[{u}]",),
                                   v.trip, v.lo, v.hi)
            else:
                by_key[key] = attrs.evolve(old, fields=(*old.fields, field), units=(*old.units, f"work_units[{u}]"))
    return out + list(by_key.values())


def host_args(spec: Any, host_label: str, trips: dict[str, Any]) -> list[dict[str, Any]]:
    """The host arguments the trip values ``trips`` set, as a counterexample carries them: ``name`` (as the kernel
    reads it: the runtime arg's name, ``get_compile_time_arg_val(0)``, ``get_vararg(1)``), ``kernel`` (the host
    description's name of the kernel reading it), ``value`` (``lo`` plus
    the trip's value), ``from`` (``HOST: kernels.KERNEL.runtime_args``), ``range`` (``lo..hi``), ``fields`` (the host
    fields giving the range), ``trip``, ``trip_value`` and ``text``, the line a report prints. ``spec``: the host
    description (``HostSpec``); ``host_label``: the host file as the user named it. Trips no host range gives are
    left out."""
    out: list[dict[str, Any]] = []
    for a in _ranged_args(spec, host_label):
        t = trips.get(a.trip)
        if not isinstance(t, int) or isinstance(t, bool):
            continue
        value = a.lo + t
        where = f" in {', '.join(a.units)}" if a.units else ""
        out.append({"name": a.name, "kernel": a.kernel, "value": value, "from": a.origin, "range": f"{a.lo}..{a.hi}",
                    "fields": list(a.fields), "trip": a.trip, "trip_value": t,
                    "text": f"{a.name} = {value} from {a.origin} (range {a.lo}..{a.hi}{where}; trip {a.trip} = {t} "
                            "in program.json)"})
    return out


def _annotate(x: Any, spec: Any, host_label: str) -> Any:
    if isinstance(x, list):
        return [_annotate(y, spec, host_label) for y in x]
    if not isinstance(x, dict):
        return x
    out: dict[str, Any] = {}
    for k, v in x.items():
        out[k] = _annotate(v, spec, host_label)
        if k == "trips" and isinstance(v, dict) and "host_args" not in x:
            got = host_args(spec, host_label, v)
            if got:
                out["host_args"] = got  # right after the trips it explains
    return out


def with_host_args(report: Report, spec: Any, host_label: str) -> Report:
    """``report`` with a ``host_args`` list (``host_args``) beside every ``trips`` object of each counterexample
    whose trips a range of the host description ``spec`` gives; ``host_label``: the host file as the user named
    it."""
    results = tuple(attrs.evolve(r, counterexample=_annotate(r.counterexample, spec, host_label))
                    if r.counterexample else r for r in report.results)
    return attrs.evolve(report, results=results)


def args_of(cex: Any) -> list[dict[str, Any]]:
    """The host arguments of a counterexample's own trips: ``host_args`` at its top level, else its replay's (a
    witness run's counterexample has no trips of its own, ``encoding._witness``: its run's are the replay's)."""
    if not isinstance(cex, dict):
        return []
    got = cex.get("host_args")
    if not isinstance(got, list) and isinstance(cex.get("replay"), dict):
        got = cex["replay"].get("host_args")
    return [a for a in got or [] if isinstance(a, dict)]


def arg_lines(cex: Any) -> list[str]:
    """The ``text`` of each host argument of a counterexample's own trips (``args_of``), the lines a report prints
    under the headline."""
    return [str(a["text"]) for a in args_of(cex) if "text" in a]


def field_position(text: str, field: str) -> tuple[int, int] | None:
    """Where the value of ``field`` (``work_units[0].runtime_args.reader.num_tiles``) starts in the YAML (or JSON)
    document ``text``: its key's (line, column), 1-based; None when the document does not parse or has no such
    field."""
    import re

    try:
        import yaml

        node = yaml.compose(text)
    except Exception:  # a host file that read once and changed since, or no PyYAML: no position
        return None
    key_mark = None
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", field):
        if part.startswith("["):
            if not isinstance(node, yaml.SequenceNode) or int(part[1:-1]) >= len(node.value):
                return None
            node, key_mark = node.value[int(part[1:-1])], None
            continue
        if not isinstance(node, yaml.MappingNode):
            return None
        hit = next(((k, v) for k, v in node.value if getattr(k, "value", None) == part), None)
        if hit is None:
            return None
        key_mark, node = hit[0].start_mark, hit[1]
    mark = key_mark if key_mark is not None else node.start_mark
    return mark.line + 1, mark.column + 1
