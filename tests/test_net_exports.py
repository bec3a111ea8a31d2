"""PNML and DOT exports round-trip (issue 9, deliverable 3): the written net, parsed back, has exactly the
certificate's places (kind, counter, initial marking), one transition per leaf op (the certificate's program order),
and one arc into and one out of every place, from its producer op and to its consumer op, with the ops' weights."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from verispatial.cli import main
from verispatial.ir.ops import SemWait
from verispatial.ir.program import Program
from verispatial.ir.serialize import load_program
from verispatial.petri.dot import to_dot
from verispatial.petri.pnml import PNML_NS, PTNET_TYPE, to_pnml
from verispatial.petri.position import op_at
from verispatial.petri.ptnet import transition_id

ROOT = Path(__file__).resolve().parent.parent
#: Programs with their committed certificates (the gate's corpus): places as the certificate states them.
CORPUS = ["examples/pipeline_small", "examples/three_sections", "examples/matmul_reuse_mcast_blackhole",
          "examples/broken/g_rendezvous_short", "models/state_accumulate.wormhole/accumulate"]

Parsed = tuple[dict[str, tuple[str, str, int]], set[str], set[tuple[str, str, int]]]


def _certificate(name: str) -> tuple[Program, dict[str, Any]]:
    base = ROOT / "proofs" / name
    return (load_program(base.with_name(base.name + ".program.json")),
            json.loads(base.with_name(base.name + ".certificate.json").read_text()))


def _weight(p: Program, end: dict[str, Any], needs: bool) -> int:
    ep = next(e for e in p.programs if e.key == end["engine"])
    op = op_at(ep.ops, tuple(end["path"]))
    if needs and isinstance(op, SemWait):
        return op.value
    return next((v for f in ("pages", "by") if isinstance(v := getattr(op, f, None), int)), 1)


def _expected(p: Program, cert: dict[str, Any]) -> tuple[list[tuple[str, str, int]], int, set[tuple[str, str, int, str, str, int]]]:
    """Per certificate place: (kind, counter, tokens); the number of leaf ops; and per place its two arcs."""
    places = [(pl["kind"], pl["counter"], pl["tokens"]) for pl in cert["places"]]
    arcs = set()
    for pl in cert["places"]:
        src, dst = pl["from"], pl["to"]
        arcs.add((pl["kind"], pl["counter"], pl["tokens"], transition_id(src["engine"], src["path"]),
                  transition_id(dst["engine"], dst["path"]), _weight(p, src, False) * 1000 + _weight(p, dst, True)))
    return places, sum(cert["program_order"].values()), arcs


def _pnml(text: str) -> Parsed:
    ns = {"p": PNML_NS}
    root = ET.fromstring(text)
    net = root.find("p:net", ns)
    assert net is not None
    assert net.get("type") == PTNET_TYPE
    places: dict[str, tuple[str, str, int]] = {}
    for pl in net.iterfind("p:page/p:place", ns):
        cert = pl.find("p:toolspecific/p:certificate", ns)
        marking = pl.find("p:initialMarking/p:text", ns)
        assert cert is not None
        assert marking is not None
        places[str(pl.get("id"))] = (str(cert.get("kind")), str(cert.get("counter")), int(str(marking.text)))
    transitions = {str(t.get("id")) for t in net.iterfind("p:page/p:transition", ns)}
    arcs = set()
    for a in net.iterfind("p:page/p:arc", ns):
        w = a.find("p:inscription/p:text", ns)
        assert w is not None
        arcs.add((str(a.get("source")), str(a.get("target")), int(str(w.text))))
    return places, transitions, arcs


_NODE = re.compile(r'^\s*"((?:[^"\\]|\\.)*)" \[shape=(box|circle), label="(?:[^"\\]|\\.)*"(?:, xlabel="\d+", tokens=(\d+))?\];$')
_EDGE = re.compile(r'^\s*"((?:[^"\\]|\\.)*)" -> "((?:[^"\\]|\\.)*)" \[label="(\d+)", weight_tokens=(\d+)\];$')
_LABEL = re.compile(r'label="((?:[^"\\]|\\.)*)"')


def _dot(text: str) -> Parsed:
    """A small reader for the DOT the exporter writes: every line is a node, an edge, or structure."""
    places: dict[str, tuple[str, str, int]] = {}
    transitions: set[str] = set()
    arcs: set[tuple[str, str, int]] = set()
    assert text.startswith("digraph ")
    assert text.rstrip().endswith("}")
    for line in text.splitlines()[1:-1]:
        if m := _NODE.match(line):
            if m[2] == "box":
                transitions.add(m[1])
            else:
                lab = _LABEL.search(line)
                assert lab is not None
                kind, counter = lab[1].split(" ", 1)
                places[m[1]] = (kind, counter, int(m[3]))
        elif m := _EDGE.match(line):
            assert m[3] == m[4]
            arcs.add((m[1], m[2], int(m[3])))
        else:
            assert re.match(r'^\s*(rankdir=LR;|subgraph "cluster_\d+" \{|label=".*";|\})$', line), line
    return places, transitions, arcs


def _check(parsed: Parsed, p: Program, cert: dict[str, Any]) -> None:
    places, transitions, arcs = parsed
    want_places, leaves, want_arcs = _expected(p, cert)
    assert sorted(places.values()) == sorted(want_places)
    assert len(transitions) == leaves
    into = {t: (s, w) for s, t, w in arcs if t in places}
    out = {s: (t, w) for s, t, w in arcs if s in places}
    assert len(arcs) == 2 * len(places)
    got = {(*places[pid], into[pid][0], out[pid][0], into[pid][1] * 1000 + out[pid][1]) for pid in places}
    assert got == want_arcs
    assert all(src in transitions for src, _w in into.values())
    assert all(dst in transitions for dst, _w in out.values())


@pytest.mark.parametrize("name", CORPUS)
def test_pnml_round_trips_to_the_certificate(name: str) -> None:
    p, cert = _certificate(name)
    _check(_pnml(to_pnml(p)), p, cert)


@pytest.mark.parametrize("name", CORPUS)
def test_dot_round_trips_to_the_certificate(name: str) -> None:
    p, cert = _certificate(name)
    _check(_dot(to_dot(p)), p, cert)


def test_export_cli_writes_each_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = str(ROOT / "examples" / "pipeline_small.json")
    p, cert = _certificate("examples/pipeline_small")
    for flag, reader in (("--pnml", _pnml), ("--dot", _dot)):
        out = tmp_path / f"net{flag[2:]}"
        assert main(["export", flag, src, "-o", str(out)]) == 0
        _check(reader(out.read_text()), p, cert)
    assert main(["export", "--promela", src]) == 0
    assert "proctype noc()" in capsys.readouterr().out
    assert main(["export", "--promela", str(ROOT / "examples" / "three_sections.json")]) == 2
    assert "outside the Promela model: 3 sections" in capsys.readouterr().err
    assert main(["export", src]) == 2
    assert "give exactly one of --promela, --pnml, --dot (got none)" in capsys.readouterr().err
    # Two formats are refused, whatever their order (the last one given used to win silently), and nothing is written.
    for flags in (["--promela", "--dot"], ["--dot", "--promela"]):
        out = tmp_path / "two"
        assert main(["export", *flags, src, "-o", str(out)]) == 2
        assert "give exactly one of --promela, --pnml, --dot (got --promela, --dot)" in capsys.readouterr().err
        assert not out.exists()
