"""``verispatial gate``: re-certify a corpus of programs against its certificates and manifest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from verispatial.cli.exits import guard
from verispatial.cli.inputs import open_proof_store
from verispatial.cli.options import cache_options
from verispatial.cli.output import check_output_path, stderr_progress, write, write_atomic, write_json
from verispatial.driver.gate import gate  # untrusted machinery (verispatial/driver): a light import
from verispatial.errors import BadInput, CheckerError, ParseError, VerispatialError


def run_gate(directory: str, manifest: str | None, ci_only: bool, jobs: int, changed: str | None,
             sarif_out: str | None, junit_out: str | None, as_json: bool, cache_dir: str | None, no_cache: bool,
             quiet: bool, scheduler: str | None = None) -> int:
    """The ``gate`` command: see ``gate_cmd``. Raises ``BadInput`` / ``CheckerError``."""
    if scheduler is not None and jobs > 1:
        raise BadInput("", "", "the cluster's workers run the programs with --scheduler: give one of them",
                       option="--jobs")
    for out in (sarif_out, junit_out):
        if out is not None:
            check_output_path(out)
    if scheduler is not None:  # a malformed address is bad input before any program is read
        from verispatial.driver.cluster import scheduler_address

        try:
            scheduler = scheduler_address(scheduler)
        except ParseError as e:
            raise BadInput(e.field, "", e.rule) from None
    store = open_proof_store(cache_dir, no_cache)

    try:
        with stderr_progress(f"gate {directory}", quiet) as progress:
            # the text summary and SARIF (lost proofs only) need no report of a proof that holds
            run = gate(directory, manifest=manifest, ci_only=ci_only, jobs=jobs, changed=changed, store=store,
                       progress=progress.advance, scheduler=scheduler,
                       summary_only=not as_json and junit_out is None)
    except ParseError as e:
        raise BadInput(e.field if e.field else directory, "", e.rule) from None
    except VerispatialError as e:
        raise BadInput(directory, "", str(e)) from None
    except Exception as e:
        raise CheckerError(f"gate: {type(e).__name__}: {e}") from None
    from verispatial.report.gate import gate_cases, gate_extra_results, gate_lines

    outputs: list[tuple[str, str]] = []
    mani = str(run.manifest.path) if run.manifest is not None and run.manifest.path is not None else directory
    if sarif_out is not None:
        from verispatial.report.sarif import program_artifact, sarif_log

        # each lost program named and located as certify --sarif does it (its buffers by name, its ops' lines)
        arts = [program_artifact(o.program, o.report, _shown(o.program))
                for o in run.outcomes if o.status == "lost" and o.report is not None and o.program is not None]
        outputs.append((sarif_out, json.dumps(sarif_log(arts, run.exit_code, gate_extra_results(run, mani)),
                                              indent=1) + "\n"))
    if junit_out is not None:
        from verispatial.report.junit import junit_xml

        outputs.append((junit_out, junit_xml(gate_cases(run), "verispatial gate")))
    for path, text in outputs:
        write_atomic(path, text)
    if as_json:
        write_json({"directory": directory, "exit_code": run.exit_code, "seconds": round(run.seconds, 3),
                     "cache": run.cache, "programs": [
                         {"name": o.name, "status": o.status, "detail": o.detail, "how": o.how,
                          "expected": o.expected.to_json() if o.expected is not None else None,
                          "seconds": round(o.seconds, 3),
                          "report": o.report.to_json() if o.report is not None else None} for o in run.outcomes]})
    else:
        write("\n".join(gate_lines(run)) + "\n")
    return run.exit_code


@click.command("gate")
@click.argument("directory", metavar="DIR")
@click.option("--manifest", metavar="M.json", help="The manifest (default: DIR/manifest.json when it exists).")
@click.option("--ci", "ci_only", is_flag=True, help="Only the manifest's programs marked ci.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Programs checked in parallel worker processes.")
@click.option("--scheduler", metavar="ADDRESS", help="Run the programs as tasks on the Dask distributed scheduler "
              "at ADDRESS (tcp://host:port); the --cache-dir must be one every worker sees (docs/ci.md).")
@click.option("--changed", metavar="REV", help="Re-check only programs whose files differ from git revision REV.")
@click.option("--sarif", "sarif_out", metavar="OUT.sarif", help="Also write the findings as SARIF 2.1.0.")
@click.option("--junit", "junit_out", metavar="OUT.xml", help="Also write JUnit XML (a test case per program "
                                                             "and family).")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON only.")
@cache_options
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
def gate_cmd(directory: str, manifest: str | None, ci_only: bool, jobs: int, scheduler: str | None,
             changed: str | None, sarif_out: str | None, junit_out: str | None, as_json: bool, cache_dir: str | None,
             no_cache: bool, quiet: bool) -> int:
    """Re-certify every program under DIR against its certificate and the manifest's expected verdict; a lost
    proof, a changed verdict, a missing or an extra program fails (exit 1)."""
    return guard(as_json, lambda: run_gate(directory, manifest, ci_only, jobs, changed, sarif_out, junit_out,
                                            as_json, cache_dir, no_cache, quiet, scheduler))


def _shown(path: Path) -> Any:
    """The program of a lost gate entry as its report's texts are shown in (a templated program's expansion), or
    None when it no longer loads (the SARIF log then names ids, as the report does)."""
    from verispatial.ir.serialize import load_document
    from verispatial.ir.templated import TemplatedProgram

    try:
        doc = load_document(path)
    except VerispatialError:
        return None
    return doc.expand() if isinstance(doc, TemplatedProgram) else doc
