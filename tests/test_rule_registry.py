"""The rule registry (verispatial/ir/rules.py) is the one list of rules: every other list derives from it, every rule
name is spelled there and nowhere else in the package, every rule is documented where its entry says, and a
refutation is confirmed by the interpreter's structured violation — rewording the interpreter's messages changes no
verdict."""

from __future__ import annotations

import importlib
import importlib.util
import io
import re
import tokenize
from pathlib import Path
from types import ModuleType

import attrs
import pytest

from verispatial.certify import checker, replay
from verispatial.certify.report import FAMILIES, Verdict
from verispatial.certify.rules import RULE_FAMILY
from verispatial.driver import run
from verispatial.ir import rules as R
from verispatial.ir.serialize import load_program
from verispatial.petri import interp, promela
from verispatial.petri.position import RULES, Violation

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "verispatial"


def _anchor(heading: str) -> str:
    """GitHub's anchor of a markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    return {_anchor(line.lstrip("#")) for line in doc.read_text().splitlines() if line.startswith("#")}


def test_names_are_unique_and_every_derived_list_comes_from_the_registry() -> None:
    names = [r.name for r in R.RULES]
    assert len(names) == len(set(names))
    assert RULES == R.INTERPRETER_RULES
    assert RULE_FAMILY == R.PER_ENGINE_RULES
    assert checker.REPLAY_RULES == R.REPLAY_RULES
    assert checker.STATIC_KINDS == R.STATIC_KINDS
    assert FAMILIES == R.FAMILIES
    assert set(promela._RULE_OF.values()) == set(R.INTERPRETER_RULES)
    for rule in R.RULES:
        for other in rule.replays_as:
            assert other in R.INTERPRETER_RULES or other == R.SEM_SET_RACE, (rule.name, other)
        assert rule.subjects or rule.replay in (R.Replay.AT_OP, R.Replay.NONE), rule.name


def test_every_rule_is_documented_where_its_entry_says() -> None:
    docs = {name: _anchors(ROOT / name) for name in ("docs/semantics.md", "docs/checker.md")}
    for rule in R.RULES:
        doc, _, anchor = rule.anchor.partition("#")
        assert anchor in docs[doc], f"{rule.name}: {rule.anchor} names no heading"
        assert rule.vendor, rule.name
        assert rule.encoding.startswith("verispatial."), rule.name
        if rule.interpreter:
            assert rule.semantics in (R.INTERP, f"{R.FAMILIES_PACKAGE}.{rule.folder}.semantics"), rule.name
            # "": the Promela export refuses the construct the rule is about (tests/test_spin.py shows the refusal)
            assert rule.promela in ("R_" + rule.name.replace("-", "_"), ""), rule.name


_CONSTANT = {v: k for k, v in vars(R).items() if k.isupper() and isinstance(v, str) and v in R.BY_NAME}


def test_each_rule_names_modules_of_its_family_folder() -> None:
    """A rule whose family has its folder (verispatial/families/<folder>/) names modules that exist there, one
    folder per rule; each of them, and the folder's Promela part when the rule has an assertion, handles the rule
    (names its registry constant ``R.X``)."""
    moved = [r for r in R.RULES if r.folder]
    assert {r.folder for r in moved} == {"cb", "semaphores", "accumulator", "noc", "multicast", "tensors", "memory",
                                         "deadlock", "rendezvous", "scratch"}
    for rule in R.RULES:
        for module in rule.modules:
            assert importlib.util.find_spec(module) is not None, (rule.name, module)
        folder = [m for m in rule.modules if m.startswith(R.FAMILIES_PACKAGE + ".")]
        assert all(m.split(".")[2] == rule.folder for m in folder), (rule.name, folder)
        for module in folder:
            source = (ROOT / (module.replace(".", "/") + ".py")).read_text()
            assert f"R.{_CONSTANT[rule.name]}" in source, (rule.name, module)
        if rule.folder and rule.promela.startswith("R_"):
            part = PACKAGE / "families" / rule.folder / "promela.py"
            assert f"R.{_CONSTANT[rule.name]}" in part.read_text(), (rule.name, part)


def test_every_rule_docs_semantics_md_states_is_in_the_registry() -> None:
    text = (ROOT / "docs/semantics.md").read_text()
    rules_part = text[text.index("## Rules"):text.index("## Fidelity ledger")]
    stated = set(re.findall(r"^- `([a-z][a-z-]+)`", rules_part, re.M))
    stated |= set(re.findall(r"`([a-z]+-[a-z-]+)`:", rules_part))
    assert stated, "the rules section lists no rule"
    assert stated <= set(R.BY_NAME), sorted(stated - set(R.BY_NAME))
    assert set(R.INTERPRETER_RULES) <= stated


def _string_tokens(path: Path) -> list[tuple[int, str]]:
    out = []
    for t in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if t.type == tokenize.STRING and not t.string.startswith(('"""', "'''", 'r"""')):
            out.append((t.start[0], t.string))
    return out


def test_rule_names_are_spelled_only_in_the_registry() -> None:
    """Hyphenated rule names anywhere, and one-word ones (``deadlock``, ``bounds``, ...) as an obligation-name prefix,
    appear as string literals only in ir/rules.py; the package names them by the registry's constants."""
    hyphenated = sorted((n for n in R.BY_NAME if "-" in n), key=len, reverse=True)
    words = [n for n in R.BY_NAME if "-" not in n]
    alt_h, alt_w = "|".join(map(re.escape, hyphenated)), "|".join(map(re.escape, words))
    lit = re.compile(rf"""^[fF]?(["'])({alt_h})(\1|:)""")
    named = re.compile(rf"""^[fF]?(["'])({alt_w}):""")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "rules.py" and path.parent.name == "ir":
            continue
        for line, s in _string_tokens(path):
            if lit.match(s) or named.match(s):
                found.append(f"{path.relative_to(ROOT)}:{line}: {s[:60]}")
    assert found == []


def _family_semantics() -> list[ModuleType]:
    return [importlib.import_module(f"{R.FAMILIES_PACKAGE}.{d.name}.semantics")
            for d in sorted((PACKAGE / "families").iterdir()) if (d / "semantics.py").is_file()]


def _reworded(rule: str, position: object, message: str, *rest: object) -> Violation:
    return Violation(rule, position, f"(reworded) {message[::-1]}", *rest)  # type: ignore[arg-type]


@pytest.mark.parametrize("example", ["k_output_unwritten", "m_alias_pack_clobber", "t_kv_no_rendezvous",
                                     "b_ring_straddle", "u_forwarder_pops_early"])
def test_rewording_the_interpreters_messages_changes_no_verdict(monkeypatch: pytest.MonkeyPatch,
                                                                 example: str) -> None:
    program = load_program(ROOT / "examples" / "broken" / f"{example}.json")
    before = {(r.name, r.verdict) for r in run.certify(program, cache=False).results}
    # Every module that builds the interpreter's violations: the interpreter and the families' semantics.
    for module in (interp, *_family_semantics()):
        if hasattr(module, "Violation"):
            monkeypatch.setattr(module, "Violation", _reworded)
    monkeypatch.setattr(replay, "_RUNS", {})  # runs are memoized per program: replay afresh
    monkeypatch.setattr(replay, "_EXPLORED", {})
    after = run.certify(program, cache=False)
    assert any("(reworded)" in str(r.counterexample) for r in after.results if r.verdict == Verdict.REFUTED)
    assert {(r.name, r.verdict) for r in after.results} == before


def test_a_violation_keeps_its_subject_through_json() -> None:
    from verispatial.ir.core import Site
    from verispatial.ir.obligation import AliasRef, BoundaryRef, BufferRef, TensorRef, WordRef
    from verispatial.petri.position import Position

    for subject in (BufferRef(3), WordRef(1, Site(2, 0)), TensorRef("kv:cache"), AliasRef(4, 5), BoundaryRef(2)):
        v = Violation(R.BALANCE_CB, Position("(0,0).reader", (1, 2)), "m", subject, "c")
        assert Violation.from_json(v.to_json()) == v
    assert attrs.fields(Violation).subject.default is None
