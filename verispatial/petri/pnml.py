"""PNML export (ISO/IEC 15909-2): the behavioural place/transition net of a program (``petri/ptnet.py``).

One ``net`` of type ``ptnet`` (``http://www.pnml.org/version-2009/grammar/ptnet``) on one ``page``: every place with
its ``initialMarking``, every transition, every arc with its ``inscription`` (weight; a read arc is an arc each way
of one weight). Each place and transition also carries a ``toolspecific`` element (tool ``verispatial``) naming
what it models — a place's ``kind`` (``pc``, ``data``, ``free``, ``word``, ...) with the engine, op path and loop
indices of a control point, a transition's ``kind`` (``step``, ``branch``, ``land``, ``leave``, ``choose``) with
the op it fires — so a reader can map a PNML tool's answer (a dead marking, a firing sequence) back to the program.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from verispatial.ir.program import Program
from verispatial.petri.ptnet import Net, net_of

__all__ = ["PNML_NS", "PTNET_TYPE", "net_pnml", "to_pnml"]

PNML_NS = "http://www.pnml.org/version-2009/grammar/pnml"
PTNET_TYPE = "http://www.pnml.org/version-2009/grammar/ptnet"


def _text(parent: ET.Element, tag: str, value: str) -> None:
    ET.SubElement(ET.SubElement(parent, tag), "text").text = value


def _where(engine: str, path: tuple[int, ...] | None, iters: tuple[int, ...]) -> dict[str, str]:
    if not engine:
        return {}
    out = {"engine": engine}
    if path is not None:
        out["path"] = ",".join(map(str, path))
    if iters:
        out["iters"] = ",".join(map(str, iters))
    return out


def net_pnml(net: Net) -> str:
    """``net`` as a PNML document (UTF-8 text, XML declaration first)."""
    root = ET.Element("pnml", xmlns=PNML_NS)
    n = ET.SubElement(root, "net", id="net0", type=PTNET_TYPE)
    _text(n, "name", net.name)
    page = ET.SubElement(n, "page", id="page0")
    for pl in net.places:
        e = ET.SubElement(page, "place", id=pl.id)
        _text(e, "name", pl.name)
        if pl.marking:
            _text(e, "initialMarking", str(pl.marking))
        ET.SubElement(ET.SubElement(e, "toolspecific", tool="verispatial", version="2"), "place",
                      {"kind": pl.kind, **_where(pl.engine, pl.path, pl.iters)})
    for t in net.transitions:
        e = ET.SubElement(page, "transition", id=t.id)
        _text(e, "name", t.label)
        ET.SubElement(ET.SubElement(e, "toolspecific", tool="verispatial", version="2"), "transition",
                      {"kind": t.kind, **_where(t.engine, t.path if t.engine else None, t.iters)})
    for a in net.arcs:
        e = ET.SubElement(page, "arc", id=a.id, source=a.source, target=a.target)
        _text(e, "inscription", str(a.weight))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def to_pnml(program: Program) -> str:
    """The PNML document of ``program``'s behavioural net (module docstring). Raises ``NetUnsupported`` as
    ``net_of`` does."""
    return net_pnml(net_of(program))
