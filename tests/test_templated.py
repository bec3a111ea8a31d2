"""The templated program form (program format version 3, issue 19 goal 4; ``verispatial/ir/templated.py``): a composed
program stored as its distinct sections and one entry per section.

What must hold, each on small composed programs (a three-layer decode step of a tiny Llama-shaped config, the
two-layer Llama-3.2-1B step with capped grids, random model graphs):

- compiling each class of equal ops once and renaming gives every section the program and pass fragments the pipeline
  gives it;
- a templated program's expansion is the program ``compose`` joins from its sections, which ``validate`` accepts;
- the document round-trips and loads (``load_document`` as templates, ``load_program`` as its expansion);
- the slices cut from the templates are those cut from the expansion: same keys, programs, offsets and accesses;
- certify reports the same obligations with the same verdicts and reasons on the templated form as on its expansion,
  proved and refuted alike (a refutation replays on the expansion), and its version-4 certificate is accepted while a
  misstated one is refuted;
- a bad binding or pattern is bad input naming the section and the rule.
"""

from __future__ import annotations

import copy
import gc
import importlib.util
import json
from pathlib import Path
from types import ModuleType

import attrs
import pytest
from hypothesis import HealthCheck, given, settings

from verispatial.certify import compositional as comp
from verispatial.certify.certificate import derive_certificate
from verispatial.certify.report import Report, Verdict
from verispatial.cli.app import main as cli_main
from verispatial.driver.cache import ProofCache
from verispatial.driver.run import certify
from verispatial.errors import InvalidProgram, ParseError
from verispatial.ir.graph import ModelGraph
from verispatial.ir.ids import op_ids
from verispatial.ir.ops import ID_TENSOR, OP_TAGS, Pop, ReadTiles, WriteTiles
from verispatial.ir.program import EngineProgram, Semaphore, program_summary, tensor_accesses, walk
from verispatial.ir.serialize import dumps, load_document, load_program, loads_document
from verispatial.ir.target import WORMHOLE
from verispatial.ir.templated import TemplatedProgram, canonical_template
from verispatial.ir.validate import _tensor_sections, _validate, validate, validate_templated
from verispatial.passes import Pipeline
from verispatial.passes.compile import CompiledSection, compile_model, compile_section, compose_step, untimed
from verispatial.passes.compose import compose
from verispatial.passes.pipeline import capped_passes
from verispatial.strategies import model_graphs

MODELS = Path(__file__).resolve().parent.parent / "examples" / "models"


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_models", MODELS / "build_models.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tiny() -> ModelGraph:
    """A three-layer decode step of a Llama-shaped config small enough to certify in about a second."""
    mod = _builder()
    cfg = attrs.evolve(mod.LLAMA, name="tiny", hidden=64, intermediate=128, heads=2, kv_heads=1, head_dim=32,
                       layers=3, vocab=64, max_seq=64)
    return mod.decode_step(cfg)  # type: ignore[no-any-return]


Step = tuple[ModelGraph, list[CompiledSection], TemplatedProgram]


def _step(graph: ModelGraph, pipeline: Pipeline) -> Step:
    secs = compile_model(graph, WORMHOLE, pipeline=pipeline, check=False)
    doc = compose_step(graph, secs, WORMHOLE, check=False).document
    assert isinstance(doc, TemplatedProgram)
    return graph, secs, doc


@pytest.fixture(scope="module")
def tiny() -> Step:
    return _step(_tiny(), Pipeline(capped_passes(2, 1, 2)))


@pytest.fixture(scope="module")
def llama2() -> Step:
    mod = _builder()
    return _step(mod.decode_step(mod.LLAMA, layers=2), Pipeline(capped_passes(1, 1, 1)))


def _state(g: ModelGraph) -> list[str]:
    return [t.name for t in g.tensors if t.role.value == "state"]


def _facts(r: Report) -> list[tuple[str, str, Verdict, str]]:
    return [(x.family, x.name, x.verdict, x.reason) for x in r.results]


@pytest.mark.parametrize("which", ["tiny", "llama2"])
def test_each_section_is_its_class_compiled_once_and_renamed(which: str, request: pytest.FixtureRequest) -> None:
    g, secs, tp = request.getfixturevalue(which)
    pipe = Pipeline(capped_passes(2, 1, 2) if which == "tiny" else capped_passes(1, 1, 1))
    for i, s in enumerate(secs):
        program, frags = compile_section(g, i, WORMHOLE, pipe)
        assert s.program == program, s.name
        assert untimed(s.fragments) == untimed(frags), s.name
    # Every layer's copy of an op is one class: the 2-layer step's 33 sections are 12 templates.
    assert len(tp.templates) == (12 if which == "llama2" else len({id(s.cls) for s in secs}))
    assert len(tp.instances) == len(secs)


@pytest.mark.parametrize("which", ["tiny", "llama2"])
def test_the_expansion_is_the_program_compose_joins(which: str, request: pytest.FixtureRequest) -> None:
    g, secs, tp = request.getfixturevalue(which)
    joined, _ = compose([s.program for s in secs], state=_state(g), target=WORMHOLE)
    full = tp.expand()
    assert full == joined
    assert validate(full) == []
    assert validate_templated(tp) == []
    assert tp.summary() == program_summary(full)
    # Each section as the templated form states it (its tensors and trips in order of use, semaphores of no
    # section: what the expansion implies, so upgrade 3 -> 2 -> 3 is the identity); nothing else changed.
    roles = {t.name: t.role for t in full.tensors}
    assert [tp.instance_program(k) for k in range(len(secs))] == [
        canonical_template(s.program, {t.name: roles[t.name] for t in s.program.tensors})[0] for s in secs]


def test_a_templated_document_round_trips_and_loads(llama2: Step, tmp_path: Path) -> None:
    _, _, tp = llama2
    text = dumps(tp)
    assert json.loads(text)["version"] == 3
    assert loads_document(text) == tp
    f = tmp_path / "step.json"
    f.write_text(text)
    assert load_document(f) == tp
    assert load_program(f) == tp.expand()
    assert len(text) < len(dumps(tp.expand())) / 1.5  # each distinct section once (two layers: about half)


@pytest.mark.parametrize("which", ["tiny", "llama2"])
def test_the_slices_cut_from_the_templates_are_the_expansions(which: str, request: pytest.FixtureRequest) -> None:
    _, _, tp = request.getfixturevalue(which)
    full = tp.expand()
    rv = comp.recognise(full)
    assert rv == comp.rendezvous_of(tp)
    assert isinstance(rv, comp.Rendezvous)
    want = comp.cut(full, rv)
    assert isinstance(want, comp.Cut)
    got = comp.cut_templated(tp)
    assert got.accesses == want.accesses
    # what cross_phase reads of each access, without building its leaf: the same (tiles listed by the templates)
    assert [(*u[:5], *u[6:8]) for u in got.uses] == [(*u[:5], *u[6:8]) for u in want.uses]
    assert [got.tiles(u) for u in got.uses] == [want.tiles(u) for u in want.uses]
    assert (got.reads, got.writes) == (want.reads, want.writes)
    for a, b in zip(got.slices, want.slices, strict=True):
        for f in ("index", "sections", "names", "key", "tensors", "trips", "buffers", "semaphores", "groups",
                  "offsets"):
            assert getattr(a, f) == getattr(b, f), (a.index, f)
        assert a.program == b.program, a.index


def test_certify_freezes_the_heap_only_while_it_runs(tiny: Step, monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices are certified with the objects made before them frozen (``compositional.frozen_heap``), nothing is left
    frozen afterwards, and a caller's own freeze is neither added to nor undone."""
    _, _, tp = tiny
    real = gc.freeze
    frozen: list[int] = []

    def freeze() -> None:
        real()
        frozen.append(gc.get_freeze_count())

    monkeypatch.setattr(gc, "freeze", freeze)
    want = _facts(certify(tp, cache=False))
    assert frozen
    assert max(frozen) > 0
    assert gc.get_freeze_count() == 0
    real()  # the caller's freeze
    try:
        frozen.clear()
        assert _facts(certify(tp, cache=False)) == want
        assert frozen == []
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_certify_proves_the_templated_form_as_its_expansion(tiny: Step) -> None:
    _, _, tp = tiny
    got = certify(tp)
    assert got.exit_code == 0
    assert _facts(got) == _facts(certify(tp.expand()))
    # Its certificate (version 4: per template, obligations per class of slices) is accepted; a misstated one is not.
    cert = derive_certificate(tp, got)
    assert cert["version"] == 4
    proofs = ProofCache()  # the three certificate checks share their proofs (what is compared is the certificate)
    checked = certify(tp, certificate=cert, cache=proofs)
    assert [(r.name, r.verdict) for r in checked.results if r.family == "certificate"] == [
        (f"certificate:{s}", Verdict.PROVED) for s in ("places", "obligations", "witnesses")]
    bad = copy.deepcopy(cert)
    key = next(iter(bad["obligations"]["classes"]))
    family = next(iter(bad["obligations"]["classes"][key]))
    bad["obligations"]["classes"][key][family].pop()  # one obligation of one class left out
    refuted = {r.name: r.verdict for r in certify(tp, certificate=bad, cache=proofs).results if r.family == "certificate"}
    assert refuted["certificate:obligations"] == Verdict.REFUTED
    # A version-3 certificate (its expansion's) is not a templated program's.
    plain = derive_certificate(tp.expand(), got)
    assert [r.verdict for r in certify(tp, certificate=plain, cache=proofs).results
            if r.family == "certificate"] == [Verdict.REFUTED]


def _without_last_pop(tp: TemplatedProgram, j: int) -> TemplatedProgram:
    """``tp`` with template ``j``'s first engine program that pops missing its last top-level pop."""
    t = tp.templates[j]
    k = next(i for i, ep in enumerate(t.programs) if any(isinstance(o, Pop) for o in ep.ops))
    ep = t.programs[k]
    last = max(i for i, o in enumerate(ep.ops) if isinstance(o, Pop))
    ep = attrs.evolve(ep, ops=ep.ops[:last] + ep.ops[last + 1:])
    t = attrs.evolve(t, programs=(*t.programs[:k], ep, *t.programs[k + 1:]))
    return attrs.evolve(tp, templates=(*tp.templates[:j], t, *tp.templates[j + 1:]))


def test_a_broken_template_is_refuted_as_its_expansion_is(tiny: Step) -> None:
    _, _, tp = tiny
    j = next(j for j, t in enumerate(tp.templates) if any(isinstance(o, Pop) for ep in t.programs for o in ep.ops))
    broken = _without_last_pop(tp, j)
    assert validate_templated(broken) == []
    got = certify(broken)
    assert got.exit_code == 1
    assert _facts(got) == _facts(certify(broken.expand()))
    # Every refutation carries a counterexample the interpreter replayed (on the expansion).
    refuted = [r for r in got.results if r.verdict == Verdict.REFUTED]
    assert refuted
    assert all(r.counterexample is not None and "replay" in r.counterexample for r in refuted)


def _bind(tp: TemplatedProgram, k: int, **changes: object) -> TemplatedProgram:
    inst = attrs.evolve(tp.instances[k], **changes)  # type: ignore[arg-type]
    return attrs.evolve(tp, instances=(*tp.instances[:k], inst, *tp.instances[k + 1:]))


def test_a_bad_binding_or_pattern_is_named(tiny: Step) -> None:
    _, _, tp = tiny
    k = next(k for k, i in enumerate(tp.instances) if len(i.tensors) >= 2)
    ts = tp.instances[k].tensors
    cases = {
        "not a declared tensor": _bind(tp, k, tensors=("nowhere", *ts[1:])),
        "one to one": _bind(tp, k, tensors=(ts[1], ts[1], *ts[2:])),
        "every section but the last is closed": _bind(tp, 0, barrier_after=False),
        "does not exist": _bind(tp, k, template=len(tp.templates)),
        "binds 1 tensors": _bind(tp, k, tensors=ts[:1]),
    }
    for rule, bad in cases.items():
        got = validate_templated(bad)
        assert any(rule in v.rule for v in got), (rule, got)
        assert all(v.entity for v in got)
    # A template tensor bound to one of another shape.
    other = next(t for t in tp.tensors if t.shape != next(x for x in tp.tensors if x.name == ts[0]).shape)
    assert any("the shapes differ" in v.rule for v in validate_templated(_bind(tp, k, tensors=(other.name, *ts[1:]))))


def test_a_resident_tensor_used_outside_its_sections_is_named(tiny: Step) -> None:
    """A resident tensor's bytes are taken only in its sections' phases, so a section outside them that reads or
    writes it may find a buffer of its own phase on them. Found by hand-editing ``compile``'s output (mlp_block:
    ``h`` resident over sections 0..0 while section 1 reads it, and section 1's ``c_16`` moved onto its bytes): it was
    proved; both forms name the resident tensor now."""
    _, _, tp = tiny
    assert validate_templated(tp) == []
    r = next(r for r in tp.resident if r.last_section > r.first_section)
    short = attrs.evolve(r, last_section=r.first_section)
    bad = attrs.evolve(tp, resident=tuple(short if x is r else x for x in tp.resident))
    # the first section past the shortened range that names the tensor (a state's: its first reader after it)
    k = min(j for j, inst in enumerate(tp.instances) if j > r.first_section and any(
        r.tensor == name for name in inst.tensors))
    want = f"is read or written in section {k}, outside its sections {r.first_section}..{r.first_section}"
    assert [(v.entity, v.rule.split(" (")[0]) for v in validate_templated(bad)] == [(f"resident {r.tensor}", want)]
    assert any(v.entity == f"resident {r.tensor}" and v.rule.startswith(want) for v in validate(bad.expand()))


def test_the_tensors_a_section_names_are_op_ids_tensors(tiny: Step) -> None:
    """The resident rule's "sections whose ops name a tensor" (``validate._tensor_sections``, found once per template
    by a stack walk) is every ``op_ids`` tensor of every op, loops' bodies included, in the expansion and in each
    template alike."""
    _, _, tp = tiny

    def by_op_ids(programs: tuple[EngineProgram, ...]) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for ep in programs:
            for i, top in enumerate(ep.ops):
                for op in walk((top,)):
                    for kind, v in op_ids(op):
                        if kind == ID_TENSOR:
                            out.setdefault(v, set()).add(ep.section_of(i))
        return out

    full = tp.expand()
    assert _tensor_sections(full.programs) == by_op_ids(full.programs)
    assert len({k for ks in by_op_ids(full.programs).values() for k in ks}) > 1  # more than one section named
    for t in tp.templates:
        assert _tensor_sections(t.programs) == by_op_ids(t.programs)
        # ... and validate's op walk, which gathers them from the ReadTiles and WriteTiles it meets (the only op
        # classes naming a tensor), with what each reads and writes (``tensor_accesses``)
        _, op_pass = _validate(t)
        assert op_pass is not None
        assert not op_pass.cut_short
        assert op_pass.tensor_sections == by_op_ids(t.programs)
        assert (op_pass.reads, op_pass.writes) == tensor_accesses(t)
    assert {cls for cls in OP_TAGS if any(f.metadata.get("id") == ID_TENSOR for f in attrs.fields(cls))} == {
        ReadTiles, WriteTiles}


def test_the_rendezvous_semaphore_slots_and_a_tensor_of_no_extent_are_named(tiny: Step) -> None:
    """The root's site holds the two rendezvous words beside a template's semaphores: one template with as many
    semaphores there as the target allows less one is refused by site (its own program holds them all); a program
    tensor with a dimension of 0 is refused by name (and its bindings' shapes then differ)."""
    _, _, tp = tiny
    root = tp.participants[0][0]
    cap = tp.target.max_semaphores
    t0 = tp.templates[0]
    have = sum(root in x.sites for x in t0.semaphores)
    extra = tuple(Semaphore(len(t0.semaphores) + i, f"extra{i}", (root,)) for i in range(cap - 1 - have))
    full = attrs.evolve(tp, templates=(attrs.evolve(t0, semaphores=(*t0.semaphores, *extra)), *tp.templates[1:]))
    assert validate(full.templates[0]) == []
    got = [(v.entity, v.rule) for v in validate_templated(full)]
    assert got == [(f"site {root}", f"{cap + 1} semaphores live at once (in one phase) exceed the target's {cap}")]
    x = tp.tensors[0]
    flat = attrs.evolve(tp, tensors=(attrs.evolve(x, shape=(0, *x.shape[1:])), *tp.tensors[1:]))
    got = [(v.entity, v.rule) for v in validate_templated(flat)]
    assert (f"tensor {x.name}", f"every dimension is positive, got {[0, *x.shape[1:]]}") in got


def test_bad_templated_documents_are_one_line_of_bad_input(tiny: Step, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    _, _, tp = tiny
    doc = json.loads(dumps(tp))
    unknown = copy.deepcopy(doc)
    unknown["sections"][1]["tensors"][0] = "nowhere"
    stray = copy.deepcopy(doc)
    stray["programs"] = []  # version 3 states no engine program of its own
    v2_with_templates = copy.deepcopy(doc)
    v2_with_templates["version"] = 2
    for name, d, want in (("unknown", unknown, "section 1"), ("stray", stray, "programs"),
                          ("v2", v2_with_templates, "templates")):
        f = tmp_path / f"{name}.json"
        f.write_text(json.dumps(d))
        with pytest.raises((ParseError, InvalidProgram)):
            load_document(f)
        assert cli_main(["validate", str(f)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert want in err[0]
        assert "Traceback" not in err[0]


def test_a_misspelt_op_of_a_template_is_named_whatever_the_number_of_sections(tiny: Step) -> None:
    """A version-3 program has at least two sections (the schema's ``minItems``): the document cut down for the
    reference validator keeps two, so the message names the misspelt op, as the reference validator does on the whole
    document, not a sections list "too short" (what a cut to one section said)."""
    import jsonschema

    from verispatial.ir.serialize import check_program_schema, schema

    doc = json.loads(dumps(tiny[2]))
    assert len(doc["sections"]) > 16  # long enough to be cut
    ops = doc["templates"][-1]["programs"][-1]["ops"]
    ops[-1] = {**ops[-1], "op": "reserv"}
    err = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema()).iter_errors(doc))
    assert err is not None
    with pytest.raises(ParseError) as got:
        check_program_schema(doc)
    want = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in err.absolute_path).lstrip(".")
    assert (got.value.field, got.value.field.endswith("].op")) == (want, True)
    assert "'reserv' is not one of" in str(got.value)


def test_validate_and_certify_read_a_templated_file(tiny: Step, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _, _, tp = tiny
    f = tmp_path / "step.json"
    f.write_text(dumps(tp) + "\n")
    engines, ops = tp.summary()
    assert cli_main(["validate", str(f)]) == 0
    assert capsys.readouterr().out.strip().endswith(f"{engines} engine programs, {ops} ops")
    out = tmp_path / "step.certificate.json"
    assert cli_main(["certify", str(f), "--write-certificate", str(out), "-q"]) == 0
    capsys.readouterr()
    assert json.loads(out.read_text())["version"] == 4
    assert cli_main(["certify", str(f), "--certificate", str(out), "-q", "--no-cache"]) == 0
    capsys.readouterr()
    # A certificate of the other kind of program is bad input (exit 2, one line), as one of an unknown version is.
    plain = Path(__file__).resolve().parent.parent / "proofs" / "examples" / "pipeline_small"
    for prog, cert, want in ((f, Path(f"{plain}.certificate.json"), "a certificate of version 4"),
                             (Path(f"{plain}.program.json"), out, "a certificate of version 1-3")):
        assert cli_main(["certify", str(prog), "--certificate", str(cert), "-q", "--no-cache"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert f"{cert}: version: {want}" in err


@settings(max_examples=max(20, settings().max_examples // 50), suppress_health_check=[HealthCheck.too_slow])
@given(graph=model_graphs(max_ops=3))
def test_random_graphs_compose_to_the_same_program_either_way(graph: ModelGraph) -> None:
    """Any model graph that compiles and composes: its templated form (when it has one) expands to the program
    ``compose`` joins, is valid, and cuts into the expansion's slices."""
    pipe = Pipeline(capped_passes(2, 2, 4))
    try:
        secs = compile_model(graph, WORMHOLE, pipeline=pipe, check=False)
        joined, _ = compose([s.program for s in secs], state=_state(graph), target=WORMHOLE)
    except Exception:  # a graph a pass or compose refuses by name: test_properties.py's concern
        return
    doc = compose_step(graph, secs, WORMHOLE, check=False).document
    if not isinstance(doc, TemplatedProgram):
        assert doc == joined
        return
    assert doc.expand() == joined
    assert validate_templated(doc) == []
    rv = comp.recognise(joined)
    assert isinstance(rv, comp.Rendezvous)
    want = comp.cut(joined, rv)
    assert isinstance(want, comp.Cut)
    assert [s.key for s in comp.cut_templated(doc).slices] == [s.key for s in want.slices]



def test_upgrade_writes_a_composed_program_as_its_templates_and_back(tiny: Step, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _, _, tp = tiny
    full = tmp_path / "full.json"
    assert cli_main(["upgrade", str(tmp_path / "nowhere.json"), "-o", str(full)]) == 2  # a missing file: one line
    capsys.readouterr()
    f3 = tmp_path / "step.json"
    f3.write_text(dumps(tp))
    assert cli_main(["upgrade", str(f3), "-o", str(full), "--expand"]) == 0
    assert load_document(full) == tp.expand()
    again = tmp_path / "again.json"
    assert cli_main(["upgrade", str(full), "-o", str(again)]) == 0
    back = load_document(again)
    assert isinstance(back, TemplatedProgram)
    assert back.expand() == tp.expand()
    assert len(back.templates) == len(tp.templates)
    capsys.readouterr()
    # A version-3 program needs no upgrade; a composition with resets has no templated form: one line each, exit 2.
    assert cli_main(["upgrade", str(f3), "-o", str(tmp_path / "x.json")]) == 2
    assert capsys.readouterr().err.strip().endswith("version 3 needs no upgrade (--expand writes it in full, version 2)")
    three = Path(__file__).resolve().parent.parent / "examples" / "three_sections.json"
    assert cli_main(["upgrade", str(three), "-o", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "has no templated form: the program-wide semaphores are not the rendezvous' two" in err[0]


def test_sarif_locates_a_refutation_in_its_template(tiny: Step, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _, _, tp = tiny
    j = next(j for j, t in enumerate(tp.templates) if any(isinstance(o, Pop) for ep in t.programs for o in ep.ops))
    f = tmp_path / "broken.json"
    f.write_text(dumps(_without_last_pop(tp, j)) + "\n")
    sarif = tmp_path / "out.sarif"
    assert cli_main(["certify", str(f), "--sarif", str(sarif), "-q", "--no-cache"]) == 1
    capsys.readouterr()
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    pointers = [loc["logicalLocations"][0]["fullyQualifiedName"] for r in results if r["level"] == "error"
                for loc in r["locations"] if loc.get("logicalLocations")]
    assert pointers
    # Each points into the document as written: a template's op, buffer or semaphore, or a section entry.
    assert all(p.startswith(("/templates/", "/sections/")) for p in pointers), pointers
    assert all("region" in loc["physicalLocation"] for r in results if r["level"] == "error" for loc in r["locations"])


def test_a_slice_handing_on_fewer_buffers_reuses_the_proofs_of_one_handing_on_more(tiny: Step) -> None:
    # The last layer's copy of a section hands no buffer on (no later phase uses its indices), the first layer's
    # does: their keys differ in those flags alone, and the first's proofs hold for the last (its balance-cb of a
    # buffer only the first hands on is the stronger question). Never the other way round.
    _, _, tp = tiny
    cut = comp.cut_templated(tp)
    pairs = [(s, t) for t in cut.slices for s in cut.slices[:t.index]
             if s.loose == t.loose and s.key != t.key and comp._stronger_source(t, [s.index], cut.slices) == s.index]
    assert pairs
    s, t = pairs[0]
    assert comp._stronger_source(s, [t.index], cut.slices) is None  # s hands on a buffer t does not
    assert [m for m, n in zip(t.handed_on, s.handed_on, strict=True) if m != n] == [False] * sum(
        m != n for m, n in zip(t.handed_on, s.handed_on, strict=True))
    # The programs differ in those buffers' persistent flags alone.
    a, b = s.program, t.program
    assert attrs.evolve(b, buffers=tuple(attrs.evolve(x, persistent=y.persistent) for x, y in
                                         zip(b.buffers, a.buffers, strict=True))) == a
    got = certify(tp)
    assert got.exit_code == 0
    reused = [r for r in got.results if r.name.startswith(f"slice{t.index}/")]
    assert reused
    assert all(r.reason.startswith(f"proved as slice{s.index}/") and "but for buffers only it hands on" in r.reason
               for r in reused)
    # What was reused is what the slice proves alone: the same obligations, every one proved.
    alone = certify(t.program)
    assert alone.exit_code == 0
    assert [r.name for r in alone.results] == [r.name for r in certify(s.program).results]


def test_a_refuted_slice_lends_no_proof_to_one_handing_on_fewer_buffers(tiny: Step) -> None:
    _, _, tp = tiny
    j = next(j for j, t in enumerate(tp.templates) if any(isinstance(o, Pop) for ep in t.programs for o in ep.ops))
    got = certify(_without_last_pop(tp, j))
    assert got.exit_code == 1
    # Every proof lent to a slice handing on fewer buffers comes from a slice whose every obligation proved.
    lent = {int(r.reason.split("/")[0].removeprefix("proved as slice")) for r in got.results
            if "but for buffers only it hands on" in r.reason}
    refuted = {int(r.name.split("/")[0].removeprefix("slice")) for r in got.results
               if r.verdict != Verdict.PROVED and r.name.startswith("slice")}
    assert refuted
    assert not lent & refuted


def test_the_slot_rule_names_the_rendezvous_words_and_the_targets_source(tiny: Step) -> None:
    """Semaphore slots (docs/checker.md): a template whose words at the root start at 0 and one whose words there
    start at 1 each fit a phase, but the later phase cannot take the earlier one's slots; the message counts, per
    initial value, the most words of that value in any one phase, names the program-wide words (the rendezvous's
    gather and release words on the root) and the target's slot count with its source."""
    _, _, tp = tiny
    root = tp.participants[0][0]
    cap = tp.target.max_semaphores
    assert len(tp.templates) > 1
    t0, t1 = tp.templates[0], tp.templates[1]
    assert not any(root in x.sites for t in (t0, t1) for x in t.semaphores)
    half = (cap - 2) // 2 + 1  # 2 + half fits one phase; 2 + 2 * half does not fit the slots
    zeros = tuple(Semaphore(len(t0.semaphores) + i, f"zero{i}", (root,), 0) for i in range(half))
    ones = tuple(Semaphore(len(t1.semaphores) + i, f"one{i}", (root,), 1) for i in range(half))
    two = attrs.evolve(tp, templates=(attrs.evolve(t0, semaphores=(*t0.semaphores, *zeros)),
                                      attrs.evolve(t1, semaphores=(*t1.semaphores, *ones)), *tp.templates[2:]))
    got = [(v.entity, v.rule) for v in validate_templated(two)]
    assert got == [(f"site {root}",
                    f"needs {2 + 2 * half} semaphore slots, more than the {cap} of target {tp.target.name} "
                    f"(max_semaphores: NUM_SEMAPHORES = 16: tt_metal/impl/buffers/semaphore.hpp): per initial value, "
                    f"the most section words of that value in any one phase ({half} starting at 0, {half} starting "
                    "at 1), plus 2 program-wide words held in every phase (compose's rendezvous words: "
                    "rendezvous_gather, rendezvous_release); a later phase takes only the slot of a word with its "
                    "own initial value")]
