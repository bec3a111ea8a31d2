"""``verispatial compile MODEL.json --target wormhole|blackhole|gpu [-o STEP.json] [--sections DIR]``: a model graph
compiled into one certified program (``passes.compile``: ``compile_model`` and ``compose_step``).

Every op becomes a section and every section is certified on its own; the sections are then composed into ONE
program (``compose``). ``-o step.json`` writes it, certified, with its certificate beside it (``step.certificate.json``;
``NAME.program.json`` gets ``NAME.certificate.json``, the layout ``gate`` reads). ``--sections DIR`` also writes each
section's ``DIR/<op>.program.json`` and ``DIR/<op>.certificate.json`` (replacing what ``DIR`` held).

Exit codes (DESIGN §8): 0 every section (and the composed program) proved; 1 something refuted; 2 bad input, a pass
refusal (the line names the pass, the op and the reason) or a compose refusal (the line names the rule); 3 something
failed to prove; 4 a checker error.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from verispatial.cli.inputs import bad_input_of, open_proof_store
from verispatial.cli.options import progress_options
from verispatial.cli.output import check_output_dir, check_program_out, write
from verispatial.errors import BadInput, ComposeRefused, PassRefused, VerispatialError

if TYPE_CHECKING:
    from verispatial.ir.graph import ModelGraph
    from verispatial.ir.target import Target
    from verispatial.passes.compile import CompiledSection, ComposedStep

#: the accumulation forms ``--acc-form`` offers (``verispatial.ir.section.AccForm``'s values, spelled here so that
#: ``--help`` and a usage error do not load the IR's graph modules; tests/test_compile_cli.py pins that they agree)
ACC_FORMS = ("single", "streaming", "spill_reload", "in_place", "pack_accumulate", "registers")


@click.command("compile")
@click.argument("model", metavar="MODEL.json")
@click.option("--target", required=True, help="wormhole, blackhole or gpu (or a full target name)")
@click.option("-o", "--out", metavar="OUT.json",
              help="write the composed program and its certificate beside it (OUT.certificate.json)")
@click.option("--sections", "out_dir", metavar="DIR",
              help="also write <DIR>/<op>.program.json and <op>.certificate.json per section (replacing what DIR held)")
@click.option("--no-certify", is_flag=True, help="compile only; do not run the checker")
@click.option("--max-cols", type=int, metavar="N", help="cap the columns of a matmul grid (default: the target's mesh)")
@click.option("--max-rows", type=int, metavar="N", help="cap the rows of a matmul grid (default: the target's mesh)")
@click.option("--max-sites", type=int, metavar="N",
              help="cap the sites of an elementwise or fold op (default: the target's mesh)")
@click.option("--acc-form", type=click.Choice(ACC_FORMS), metavar="FORM",
              help="force every matmul's accumulation form (" + ", ".join(ACC_FORMS) + "); a section "
                   "where it cannot apply is refused by name (default: tile's rule)")
@click.option("--one-mover", is_flag=True,
              help="run each site's loads and stores on one data-movement engine (their loop nests interleaved); a "
                   "gather or scatter is refused by name")
@click.option("--cache-dir", metavar="DIR",
              help="the persistent proof cache (default: $VERISPATIAL_CACHE_DIR, else the user's cache directory)")
@click.option("--no-cache", is_flag=True, help="neither read nor write the persistent proof cache")
@progress_options
def compile_cmd(model: str, target: str, out: str | None, out_dir: str | None, no_certify: bool,
                max_cols: int | None, max_rows: int | None, max_sites: int | None, acc_form: str | None,
                one_mover: bool, cache_dir: str | None, no_cache: bool, quiet: bool, plain_progress: bool) -> int:
    """Compile a model graph into one certified program (MODEL.json --target wormhole|blackhole|gpu -o STEP.json
    [--sections DIR])."""
    graph, machine = _load(model, target)
    _check_outputs(out, out_dir, model)
    caps = (max_cols, max_rows, max_sites)
    if any(c is not None and c < 1 for c in caps):
        raise BadInput("", "", "--max-cols, --max-rows and --max-sites take a positive number")
    store = open_proof_store(cache_dir, no_cache)
    from verispatial.report.progress import progress as progress_on

    with progress_on(f"compile {model}", quiet=quiet, terminal=False if plain_progress else None) as shown:
        sections, step = _compile(model, graph, machine, caps, acc_form, one_mover, not no_certify, store, out,
                                  out_dir, shown.say)
    return _summary(graph, machine, sections, step, out)


def _load(model: str, target: str) -> tuple[ModelGraph, Target]:
    """The model graph and the target; ``BadInput`` naming the file (and the field) for what is wrong with them."""
    from verispatial.ir.graph import load_graph
    from verispatial.ir.target import get_target

    try:
        return load_graph(model), get_target(target)
    except RecursionError:  # JSON nested past what the reader takes
        raise BadInput(model, "(document)", "JSON nested too deeply") from None
    except OSError as e:
        raise BadInput(model, "", f"cannot read: {e.strerror or e}") from None
    except VerispatialError as e:  # a ParseError names its field (the file itself, or ``target``)
        raise bad_input_of(model, e) from None


def _check_outputs(out: str | None, out_dir: str | None, model: str) -> None:
    """``BadInput`` for an output that cannot be written, checked before any work: a compile that cannot write its
    results must not run for minutes first."""
    from verispatial.passes.compile import foreign_files

    if out_dir is not None:
        check_output_dir(out_dir, "the sections")
    foreign = foreign_files(Path(out_dir)) if out_dir is not None else []
    if out_dir is not None and foreign:
        # A sections directory is replaced whole (stale sections do not linger): never one holding anything else.
        raise BadInput(out_dir, "", f"holds files compile did not write ({', '.join(foreign[:3])}"
                       + (f", +{len(foreign) - 3} more" if len(foreign) > 3 else "") + "): expected a sections "
                       "directory (only <op>.program.json and <op>.certificate.json) or a new one")
    if out is not None:
        check_program_out(out, (model,))


def _compile(model: str, graph: ModelGraph, machine: Target, caps: tuple[int | None, int | None, int | None],
             acc_form: str | None, one_mover: bool, check: bool, store: Any, out: str | None, out_dir: str | None,
             progress: Callable[[str], None]) -> tuple[list[CompiledSection], ComposedStep | None]:
    """Compile (and, with ``check``, certify) every section, compose them when ``out`` is given, then write: the
    composition is refused, naming its rule, before anything is written."""
    from verispatial.driver.cache import ProofCache  # z3 loads only when compile runs
    from verispatial.passes.compile import compile_model, compose_step, write_program, write_sections
    from verispatial.passes.pipeline import Pipeline, capped_passes

    try:
        pipeline = Pipeline(capped_passes(*caps, acc_form=acc_form, one_mover=one_mover))
        proofs = ProofCache(store)
        # Composed (-o), every section is certified as its slice of the composed program, which is what runs; alone
        # only where its own certificate is written (--sections) or there is no composition.
        alone = check and (out is None or out_dir is not None)
        sections = compile_model(graph, machine, None, progress, check=alone, pipeline=pipeline, cache=proofs)
        step = None if out is None else compose_step(graph, sections, machine, check=check, progress=progress,
                                                     cache=proofs)
        if out_dir is not None:
            write_sections(sections, Path(out_dir))
        if step is not None and out is not None:
            write_program(step.document, step.certificate, out)
    except ComposeRefused as e:
        raise BadInput(model, "", str(e)) from None
    except PassRefused as e:
        raise BadInput(model, "", f"pass {e.pass_name!r} refused: {e.reason}") from None
    except OSError as e:
        where = out if out is not None and e.filename and str(out) in str(e.filename) else out_dir
        raise BadInput(str(where), "", f"cannot write: {e.strerror or e}") from None
    return sections, step


def _summary(graph: ModelGraph, machine: Target, sections: list[CompiledSection], step: ComposedStep | None,
             out: str | None) -> int:
    """Print one line per section, one for the composed program and one for the graph; the worst verdict's code."""
    from verispatial.passes.compile import certificate_path

    worst = 0
    in_step = step.slice_codes() if step is not None and out is not None else None
    for k, s in enumerate(sections):
        code = s.exit_code
        how = f"{verdict_of(code)} in {s.certify_seconds:.2f} s"
        if code is None and in_step is not None and in_step[k] is not None:
            code = in_step[k]
            how = f"{verdict_of(code)} as slice {step.phase_of(k)} of the composed program"  # type: ignore[union-attr]
        write(f"{s.name}: {s.op}, {s.engine_programs} engine programs, {s.ops} ops, "
              f"compiled in {s.compile_seconds:.3f} s, {how}\n")
        worst = worse(worst, code if code is not None else 0)
    if step is not None and out is not None:
        from verispatial.ir.templated import document_summary

        engines, _ = document_summary(step.document)
        write(f"{step.document.name}: composed, {len(step.document.sections)} sections, "
              f"{engines} engine programs, {step.ops} ops, composed in "
              f"{step.compose_seconds:.2f} s, {verdict(step.report)} in {step.certify_seconds:.2f} s, written to "
              f"{out} and {certificate_path(out)}\n")
        worst = worse(worst, step.report.exit_code if step.report is not None else 0)
    write(f"{graph.name}: {len(sections)} sections on {machine.name}\n")
    return worst


def verdict(report: object) -> str:
    """A report's verdict in the summary's words (``not certified`` for none)."""
    return verdict_of(getattr(report, "exit_code", None))


def verdict_of(code: int | None) -> str:
    """An exit code's verdict in the summary's words (``not certified`` for None)."""
    return "not certified" if code is None else {0: "proved", 1: "REFUTED", 3: "failed to prove", 4: "checker error"}[code]


def worse(a: int, b: int) -> int:
    """Refuted outranks checker error, which outranks failed to prove (as Report.exit_code)."""
    return max(a, b, key=lambda c: {0: 0, 3: 1, 4: 2, 1: 3}[c])
