"""The SARIF rules' help is derived from the docs: ``verispatial/report/rule_help.json`` is what
``rule_help.build`` reads out of docs/semantics.md, docs/checker.md, docs/ci.md and README.md, every rule kind the
checker, the interpreter and the gate report has its own entry, and each entry's anchor is a heading of its doc."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from verispatial.certify.report import FAMILIES
from verispatial.driver.gate import FAILING
from verispatial.petri.position import RULES
from verispatial.report import rule_help

ROOT = Path(__file__).resolve().parent.parent


def test_the_shipped_table_is_what_the_docs_say() -> None:
    assert rule_help.load() == rule_help.build(ROOT), (
        "docs changed: regenerate with `python -m verispatial.report.rule_help .` from the repository root")


def _kinds_in_the_corpus() -> set[str]:
    out = set()
    for f in (ROOT / "proofs").rglob("*.certificate.json"):
        for o in json.loads(f.read_text()).get("obligations", []):
            out.add(re.sub(r"^slice\d+/", "", o["name"]).split(":", 1)[0])
    return out


def test_every_rule_kind_has_its_own_entry() -> None:
    table = rule_help.load()
    gate = {f"gate-{s}" for s in FAILING if s != "lost"}
    kinds = set(RULES) | _kinds_in_the_corpus() | gate | {"certificate", "budget", "memory-range", "hb-write-write",
                                                          "hb-cross", "rendezvous", "mcast-address"}
    assert kinds <= set(table), sorted(kinds - set(table))
    assert {f"family:{f}" for f in FAMILIES} <= set(table)


@pytest.mark.parametrize("rule", RULES)
def test_an_interpreter_rule_is_its_bullet_in_semantics(rule: str) -> None:
    h = rule_help.load()[rule]
    assert h["documentation"].startswith("docs/semantics.md#")
    semantics = (ROOT / "docs" / "semantics.md").read_text()
    # The help's first paragraph is the doc's bullet, word for word (less its "- "); rendezvous-early's definition
    # is a paragraph of its own.
    first = h["markdown"].split("\n\n")[0]
    assert ("\n- " + first.replace("\n", "\n  ") in semantics) != (rule == "rendezvous-early")
    assert f"\n{first}\n" in semantics or rule != "rendezvous-early"
    assert f"`{rule}`" in first


def test_anchors_are_headings_of_their_docs() -> None:
    for kind, h in rule_help.load().items():
        doc, _, anchor = h["documentation"].partition("#")
        assert anchor in rule_help.anchors((ROOT / doc).read_text()), (kind, h["documentation"])
        assert 0 < len(h["summary"]) <= 300
        assert "None" not in h["summary"]
        assert h["text"]
        assert "`" not in h["text"]
        assert "**" not in h["text"]


def test_slugs_follow_github() -> None:
    assert rule_help.anchors("# Op semantics — the ground truth\n## Aliases\n### Aliases\n### Fidelity ledger: "
                             "protocols\n```\n# not a heading\n```\n") == [
        "op-semantics--the-ground-truth", "aliases", "aliases-1", "fidelity-ledger-protocols"]


def test_an_unknown_kind_falls_back_to_its_family() -> None:
    h = rule_help.help_for("cb-brand-new", "circular-buffer")
    assert h == rule_help.load()["family:circular-buffer"]
    assert rule_help.help_for("zzz", "no-such-family") == rule_help.load()["default"]
