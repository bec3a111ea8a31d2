"""PNML export (ISO/IEC 15909-2): the place/transition net of a program's marked graph (``petri/ptnet.py``).

One ``net`` of type ``ptnet`` (``http://www.pnml.org/version-2009/grammar/ptnet``) on one ``page``: every place with
its ``initialMarking``, every transition, every arc with its ``inscription`` (weight). Each place and transition
also carries a ``toolspecific`` element (tool ``verispatial``) naming the certificate entry (kind, counter) or the
op (engine, path), so a reader can map the net back to the program.
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


def net_pnml(net: Net) -> str:
    """``net`` as a PNML document (UTF-8 text, XML declaration first)."""
    root = ET.Element("pnml", xmlns=PNML_NS)
    n = ET.SubElement(root, "net", id="net0", type=PTNET_TYPE)
    _text(n, "name", net.name)
    page = ET.SubElement(n, "page", id="page0")
    for pl in net.places:
        e = ET.SubElement(page, "place", id=pl.id)
        _text(e, "name", f"{pl.kind} {pl.counter}")
        _text(e, "initialMarking", str(pl.marking))
        ET.SubElement(ET.SubElement(e, "toolspecific", tool="verispatial", version="1"), "certificate",
                      kind=pl.kind, counter=pl.counter)
    for t in net.transitions:
        e = ET.SubElement(page, "transition", id=t.id)
        _text(e, "name", t.label)
        ET.SubElement(ET.SubElement(e, "toolspecific", tool="verispatial", version="1"), "op",
                      engine=t.engine, path=",".join(map(str, t.path)))
    for a in net.arcs:
        e = ET.SubElement(page, "arc", id=a.id, source=a.source, target=a.target)
        _text(e, "inscription", str(a.weight))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def to_pnml(program: Program) -> str:
    """The PNML document of ``program``'s marked graph (module docstring)."""
    return net_pnml(net_of(program))
