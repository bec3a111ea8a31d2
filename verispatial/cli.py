"""The ``verispatial`` command line: a thin click layer over testable functions.

``main(argv) -> int`` never raises and never prints a traceback. Exit codes (DESIGN §8):

- 0: every obligation proved (``certify``), a terminated run without violations (``simulate``), a valid program
  (``validate``);
- 1: something refuted (``certify``), a deadlock, step limit or violation (``simulate``);
- 2: bad input: one line ``verispatial: error: <file>: <field>: <rule>`` on stderr, nothing written;
- 3: something failed to prove (never accepted);
- 4: a checker error (``verispatial: checker error: ...``).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich.console import Console
from rich.text import Text

from verispatial import __version__
from verispatial.errors import CertificateMismatch, InvalidProgram, ParseError, VerispatialError

if TYPE_CHECKING:
    from verispatial.certify.report import Report
    from verispatial.ir.program import Program

EXIT_OK = 0
EXIT_REFUTED = 1
EXIT_BAD_INPUT = 2
EXIT_FAILED = 3
EXIT_CHECKER_ERROR = 4
EXIT_INTERRUPTED = 130  # the shell's code for SIGINT

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


class BadInput(Exception):
    """Bad input found by the CLI: ``where`` is the file (or option), ``field`` the JSON path or part, ``rule``
    what was expected; ``violations`` holds every structural violation when there were several."""

    def __init__(self, where: str, field: str, rule: str, violations: Sequence[tuple[str, str]] = ()) -> None:
        self.where = where
        self.field = field
        self.rule = rule
        self.violations = list(violations)
        super().__init__(self.line())

    def line(self) -> str:
        """The one-line message (without the ``verispatial: error:`` prefix); several structural violations
        show the first and how many more."""
        parts = [p for p in (self.where, self.field, self.rule) if p]
        more = f" (+{len(self.violations) - 1} more)" if len(self.violations) > 1 else ""
        return ": ".join(parts) + more

    def to_json(self) -> dict[str, Any]:
        return {
            "exit_code": EXIT_BAD_INPUT,
            "error": {
                "file": self.where,
                "field": self.field,
                "rule": self.rule,
                "violations": [{"entity": e, "rule": r} for e, r in self.violations],
            },
        }


class CheckerError(Exception):
    """The checker (or simulator) itself failed: exit 4."""


# --------------------------------------------------------------------------------------------- loading


def bad_input_of(where: str, err: VerispatialError) -> BadInput:
    """Translate a ``VerispatialError`` about file ``where`` into a ``BadInput`` with one line."""
    if isinstance(err, InvalidProgram):
        vs = [(v.entity, v.rule) for v in err.violations]
        if not vs:
            return BadInput(where, "", "invalid program")
        return BadInput(where, vs[0][0], vs[0][1], vs)
    if isinstance(err, ParseError):
        # load_program names a missing file or a directory by its path: do not say the path twice.
        field = "" if err.field in ("", where) else err.field
        return BadInput(where, field, err.rule)
    if isinstance(err, CertificateMismatch):
        return BadInput(where, "certificate", err.what)
    return BadInput(where, "", str(err))


def load_program_file(path: str) -> Program:
    """Read, schema-check and validate ``path``; ``BadInput`` for anything wrong with it, ``CheckerError`` for a
    fault of the loader itself."""
    from verispatial.ir.serialize import load_program

    try:
        return load_program(path)
    except VerispatialError as e:
        raise bad_input_of(path, e) from None
    except OSError as e:
        raise BadInput(path, "", f"cannot read: {e.strerror or e}") from None
    except RecursionError:
        raise BadInput(path, "(document)", "JSON nested too deeply") from None
    except Exception as e:
        raise CheckerError(f"loading {path}: {type(e).__name__}: {e}") from None


def load_json_object(path: str, what: str) -> dict[str, Any]:
    """Read ``path`` as a JSON object (``what`` names it in messages, e.g. "certificate"); ``BadInput`` if it is
    missing, a directory, empty, not UTF-8, not JSON or not an object."""
    p = Path(path)
    if not p.exists():
        raise BadInput(path, "", "no such file")
    if p.is_dir():
        raise BadInput(path, "", f"is a directory, expected a {what} JSON file")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise BadInput(path, "", f"cannot read: {e.strerror or e}") from None
    if not data.strip():
        raise BadInput(path, "", "the file is empty")
    from verispatial.ir.serialize import parse_json

    try:
        d = parse_json(data)
    except ParseError as e:
        raise BadInput(path, e.field, e.rule) from None
    except RecursionError:
        raise BadInput(path, "(document)", "JSON nested too deeply") from None
    if not isinstance(d, dict):
        raise BadInput(path, "(document)", f"expected a JSON object ({what}), got {_json_type(d)}")
    return d


def _json_type(v: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(v), "null" if v is None else type(v).__name__
    )


def parse_trips(specs: Sequence[str], program: Program) -> dict[str, int]:
    """``NAME=V`` pairs as a dict; ``BadInput`` (naming ``--trip``) for a malformed pair, an undeclared trip or
    a value outside the trip's ``[0, max]``."""
    maxes = program.trip_max()
    out: dict[str, int] = {}
    for spec in specs:
        name, eq, value = spec.partition("=")
        name = name.strip()
        if not eq or not name:
            raise BadInput("--trip", spec, "expected NAME=VALUE")
        try:
            v = int(value.strip())
        except ValueError:
            raise BadInput("--trip", spec, f"value {value.strip()!r} is not an integer") from None
        if name not in maxes:
            known = ", ".join(sorted(maxes)) or "none"
            raise BadInput("--trip", spec, f"trip {name!r} is not declared by the program (declared: {known})")
        if not 0 <= v <= maxes[name]:
            raise BadInput("--trip", spec, f"{v} is outside trip {name}'s range [0, {maxes[name]}]")
        if name in out:
            raise BadInput("--trip", spec, f"trip {name} is given twice")
        out[name] = v
    return out


def check_output_path(path: str) -> None:
    """``BadInput`` unless ``path`` can be created: its directory exists and it is not itself a directory.

    Checked before any work so that bad input writes nothing.
    """
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise BadInput(path, "", "is a directory, expected an output file path")
    if not parent.is_dir():
        raise BadInput(path, "", f"cannot write: directory {str(parent)!r} does not exist")


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and a rename, so the file is
    either absent or complete. ``BadInput`` if it cannot be written."""
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{p.name}.", suffix=".tmp")
    except OSError as e:
        raise BadInput(path, "", f"cannot write: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        # mkstemp creates the file 0600; a report is for others too (CI uploads it): the mode a plain write would give.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, p)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise BadInput(path, "", f"cannot write: {e.strerror or e}") from None


# --------------------------------------------------------------------------------------------- rendering


def program_summary(p: Program) -> tuple[int, int]:
    """(engine programs, ops) of ``p``; ops count every op once in the text, loops and their bodies included."""
    from verispatial.ir.program import walk

    return len(p.programs), sum(1 for ep in p.programs for _ in walk(ep.ops))


def _scalar(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json.dumps(v)


def _has_object(v: Any) -> bool:
    if isinstance(v, dict):
        return True
    return isinstance(v, list) and any(_has_object(x) for x in v)


def render_value(key: str | None, v: Any, indent: str) -> list[str]:
    """A JSON value as indented YAML-like lines: ``key: value``; an object's fields one level deeper; an array
    of objects as ``- `` items; an array without objects inline as JSON (``path: [2, 6]``)."""
    head = f"{indent}{key}:" if key is not None else f"{indent}-"
    if isinstance(v, dict):
        if not v:
            return [f"{head} {{}}"]
        lines = [head]
        for k, x in v.items():
            lines += render_value(str(k), x, indent + "  ")
        return lines
    if isinstance(v, list):
        if not _has_object(v):
            return [f"{head} {json.dumps(v)}"]
        lines = [head]
        for x in v:
            if isinstance(x, dict) and x:
                # YAML style: the item's first field shares the "- " line.
                sub = render_value(None, x, indent + "  ")[1:]
                inner = indent + "    "
                lines.append(indent + "  - " + sub[0][len(inner):])
                lines += sub[1:]
            else:
                lines += render_value(None, x, indent + "  ")
        return lines
    return [f"{head} {_scalar(v)}"]


def counterexample_lines(cex: dict[str, Any], indent: str = "    ", reason: str = "") -> list[str]:
    """A counterexample: its ``summary`` first (when present and not the same as ``reason``, which was already
    printed), then every other field."""
    lines = []
    summary = cex.get("summary")
    if isinstance(summary, str) and summary != reason:
        lines.append(indent + summary)
    for k, v in cex.items():
        if k == "summary" and isinstance(v, str):
            continue
        lines += render_value(str(k), v, indent)
    return lines


_STYLE = {"proved": "green", "refuted": "bold red", "failed-to-prove": "yellow", "error": "bold magenta"}


def report_lines(report: Report, program: Program) -> list[tuple[str, str]]:
    """The human report as (text, style) lines: header, one line per family, each refutation with its
    counterexample, each failure to prove and each error with its reason, and the verdict."""
    from verispatial.certify.report import Verdict

    engines, ops = program_summary(program)
    out: list[tuple[str, str]] = [
        (f"program {report.program}  target {report.target}  engines {engines}  ops {ops}", "bold")
    ]
    families = report.by_family()
    width = max((len(f) for f in families), default=0)
    for fam, results in families.items():
        n = {v: sum(1 for r in results if r.verdict == v) for v in Verdict}
        secs = sum(r.seconds for r in results)
        out.append((
            f"  {fam:<{width}}  {n[Verdict.PROVED]:>4} proved  {n[Verdict.REFUTED]:>3} refuted  "
            f"{n[Verdict.FAILED]:>3} failed-to-prove  {n[Verdict.ERROR]:>3} error  {secs:8.2f} s",
            "",
        ))
    for r in report.results:
        if r.verdict == Verdict.REFUTED:
            out.append((f"refuted {r.family}/{r.name}" + (f": {r.reason}" if r.reason else ""), _STYLE["refuted"]))
            if r.counterexample:
                out += [(line, "") for line in counterexample_lines(r.counterexample, reason=r.reason)]
    for r in report.results:
        if r.verdict in (Verdict.FAILED, Verdict.ERROR):
            out.append((f"{r.verdict.value} {r.family}/{r.name}: {r.reason or '(no reason given)'}",
                        _STYLE[r.verdict.value]))
    n_all = len(report.results)
    counts = {v: sum(1 for r in report.results if r.verdict == v) for v in Verdict}
    tally = (f"{counts[Verdict.PROVED]} proved, {counts[Verdict.REFUTED]} refuted, "
             f"{counts[Verdict.FAILED]} failed-to-prove, {counts[Verdict.ERROR]} error "
             f"of {n_all} obligations in {report.seconds:.2f} s")
    word = {EXIT_OK: "proved", EXIT_REFUTED: "refuted", EXIT_FAILED: "failed-to-prove (not accepted)",
            EXIT_CHECKER_ERROR: "checker error"}.get(report.exit_code, "error")
    style = {EXIT_OK: "proved", EXIT_REFUTED: "refuted", EXIT_FAILED: "failed-to-prove"}.get(report.exit_code, "error")
    out.append((f"verdict: {word} ({tally})", "bold " + _STYLE[style]))
    return out


def sarif(report: Report, program_path: str) -> dict[str, Any]:
    """SARIF 2.1.0 for ``report``: one result per refuted, failed-to-prove or error obligation;
    ``ruleId`` is ``family/name``, the counterexample sits in the result's ``properties``."""
    from verispatial.certify.report import Verdict

    uri = Path(program_path).as_posix()
    bad = [r for r in report.results if r.verdict != Verdict.PROVED]
    rule_ids: list[str] = []
    for r in bad:
        rid = f"{r.family}/{r.name}"
        if rid not in rule_ids:
            rule_ids.append(rid)
    level = {Verdict.REFUTED: "error", Verdict.FAILED: "warning", Verdict.ERROR: "error"}
    kind = {Verdict.REFUTED: "fail", Verdict.FAILED: "open", Verdict.ERROR: "fail"}
    results = []
    for r in bad:
        rid = f"{r.family}/{r.name}"
        text = f"{r.verdict.value}: {rid}" + (f": {r.reason}" if r.reason else "")
        summary = (r.counterexample or {}).get("summary")
        if isinstance(summary, str) and summary != r.reason:
            text += f" ({summary})"
        props: dict[str, Any] = {"verdict": r.verdict.value, "family": r.family, "seconds": round(r.seconds, 3)}
        if r.counterexample is not None:
            props["counterexample"] = r.counterexample
        results.append({
            "ruleId": rid,
            "ruleIndex": rule_ids.index(rid),
            "level": level[r.verdict],
            "kind": kind[r.verdict],
            "message": {"text": text},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri, "index": 0}}}],
            "properties": props,
        })
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "verispatial",
                "version": __version__,
                "rules": [{"id": rid, "name": rid.replace("/", "."), "shortDescription": {"text": rid}}
                          for rid in rule_ids],
            }},
            "artifacts": [{"location": {"uri": uri}}],
            "invocations": [{"executionSuccessful": report.exit_code != EXIT_CHECKER_ERROR,
                             "exitCode": report.exit_code}],
            "results": results,
            "properties": {"program": report.program, "target": report.target},
        }],
    }


# --------------------------------------------------------------------------------------------- command bodies


def _stdout() -> Console:
    # Resolved per call so that test capture (and redirected stdout) is honoured; soft_wrap keeps a long
    # counterexample on one line instead of folding it at the console width; no markup: messages contain [].
    return Console(highlight=False, soft_wrap=True, markup=False, emoji=False)


def _emit(lines: list[tuple[str, str]]) -> None:
    con = _stdout()
    for text, style in lines:
        con.print(Text(text, style=style))


def _write_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=1) + "\n")


@contextlib.contextmanager
def _progress(label: str) -> Iterator[Callable[[str], None]]:
    """A progress callback: a rich status line on stderr when stderr is a terminal, else a no-op."""
    err = Console(stderr=True)
    if not err.is_terminal:
        yield lambda _msg: None
        return
    with err.status(label) as st:
        yield lambda msg: st.update(f"{label}: {msg}")


def run_certify(program_path: str, certificate: str | None, as_json: bool, sarif_out: str | None, jobs: int,
                certificate_out: str | None, smt2_dir: str | None = None) -> int:
    """The ``certify`` command: see ``certify_cmd``. Raises ``BadInput`` / ``CheckerError``."""
    for out in (sarif_out, certificate_out):
        if out is not None:
            check_output_path(out)
    if smt2_dir is not None:
        d = Path(smt2_dir)
        if d.exists() and not d.is_dir():
            raise BadInput(smt2_dir, "", "exists and is not a directory, expected a directory for the SMT-LIB2 queries")
        # Like the other outputs, its parent must exist; the directory itself is created (checked before any work).
        parent = d.parent if str(d.parent) else Path(".")
        if not d.exists() and not parent.is_dir():
            raise BadInput(smt2_dir, "", f"cannot write: directory {str(parent)!r} does not exist")
    program = load_program_file(program_path)
    cert = load_json_object(certificate, "certificate") if certificate is not None else None
    if cert is not None and certificate is not None:
        from verispatial.certify.certificate import check_certificate_shape

        try:
            check_certificate_shape(cert)
        except ParseError as e:
            raise BadInput(certificate, e.field, e.rule) from None
    if smt2_dir is not None:
        try:
            Path(smt2_dir).mkdir(exist_ok=True)
        except OSError as e:
            raise BadInput(smt2_dir, "", f"cannot write: {e.strerror or e}") from None
    try:
        import contextlib

        from verispatial.certify.checker import certify
        from verispatial.certify.smt import export_smt2

        export = export_smt2(smt2_dir) if smt2_dir is not None else contextlib.nullcontext()
        with export, _progress(f"certifying {program.name}") as progress:
            report = certify(program, certificate=cert, jobs=jobs, progress=progress)
    except VerispatialError as e:
        blame = certificate if certificate is not None and isinstance(e, (ParseError, CertificateMismatch)) \
            else program_path
        raise bad_input_of(blame, e) from None
    except Exception as e:
        raise CheckerError(f"{type(e).__name__}: {e}") from None
    # Every output is computed before the first is written, so a failure leaves no partial set of files.
    outputs: list[tuple[str, str]] = []
    if sarif_out is not None:
        outputs.append((sarif_out, json.dumps(sarif(report, program_path), indent=1) + "\n"))
    if certificate_out is not None and report.exit_code == EXIT_OK:
        try:
            from verispatial.certify.certificate import derive_certificate

            derived = derive_certificate(program, report)
            outputs.append((certificate_out, json.dumps(derived, indent=1) + "\n"))
        except Exception as e:
            raise CheckerError(f"deriving the certificate: {type(e).__name__}: {e}") from None
    for path, text in outputs:
        write_atomic(path, text)
    if as_json:
        _write_json(report.to_json())
    else:
        _emit(report_lines(report, program))
    return report.exit_code


def run_simulate(program_path: str, trip_specs: Sequence[str], seed: int | None, as_json: bool) -> int:
    """The ``simulate`` command: see ``simulate_cmd``. Raises ``BadInput`` / ``CheckerError``."""
    program = load_program_file(program_path)
    trips = parse_trips(trip_specs, program)
    try:
        from verispatial.petri.interp import simulate

        result = simulate(program, trips=trips, seed=seed)
    except VerispatialError as e:
        raise bad_input_of(program_path, e) from None
    except Exception as e:
        raise CheckerError(f"simulator: {type(e).__name__}: {e}") from None
    if as_json:
        _write_json(result.to_json())
    else:
        sys.stdout.write(result.text() + "\n")
    return EXIT_OK if result.status == "terminated" and not result.violations else EXIT_REFUTED


def run_validate(program_path: str, as_json: bool) -> int:
    """The ``validate`` command: prints every structural violation (one per line on stdout) and the one-line
    error on stderr; raises ``BadInput`` for unreadable or malformed files."""
    try:
        program = load_program_file(program_path)
    except BadInput as e:
        if e.violations and not as_json:
            for entity, rule in e.violations:
                sys.stdout.write(f"{program_path}: {entity}: {rule}\n")
        raise
    engines, ops = program_summary(program)
    if as_json:
        _write_json({"file": program_path, "valid": True, "program": program.name, "target": program.target.name,
                     "engines": engines, "ops": ops, "violations": []})
    else:
        sys.stdout.write(f"{program_path}: valid: program {program.name}, target {program.target.name}, "
                         f"{engines} engine programs, {ops} ops\n")
    return EXIT_OK


# --------------------------------------------------------------------------------------------- click layer


def _fail(e: BadInput, as_json: bool) -> NoReturn:
    if as_json:
        _write_json(e.to_json())
    raise e


def _guard(as_json: bool, body: Callable[[], int]) -> int:
    try:
        return body()
    except BadInput as e:
        _fail(e, as_json)


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, no_args_is_help=True)
@click.version_option(__version__, prog_name="verispatial")
def cli() -> None:
    """verispatial: certify spatial dataflow programs (program.json) with a Z3-backed checker.

    Exit codes: 0 all proved / ran clean, 1 refuted, 2 bad input, 3 failed to prove, 4 checker error.
    """


@cli.command("certify")
@click.argument("program", metavar="PROGRAM.json")
@click.option("--certificate", metavar="C.json", help="A certificate to check against the re-derived one.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON only.")
@click.option("--sarif", "sarif_out", metavar="OUT.sarif", help="Also write the result as SARIF 2.1.0.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Obligations discharged in parallel.")
@click.option("--write-certificate", "certificate_out", metavar="OUT.json",
              help="Write the derived certificate (only when every obligation is proved).")
@click.option("--smt2", "smt2_dir", metavar="DIR",
              help="Also write every solver query as SMT-LIB2 into DIR, for re-checking by another solver.")
def certify_cmd(program: str, certificate: str | None, as_json: bool, sarif_out: str | None, jobs: int,
                certificate_out: str | None, smt2_dir: str | None) -> int:
    """Discharge every obligation of PROGRAM.json and report each verdict."""
    return _guard(as_json, lambda: run_certify(program, certificate, as_json, sarif_out, jobs, certificate_out,
                                               smt2_dir))


@cli.command("gate")
@click.argument("directory", metavar="DIR")
def gate_cmd(directory: str) -> int:
    """Re-certify every NAME.program.json under DIR against NAME.certificate.json; any lost proof fails."""
    from verispatial.certify.gate import gate

    try:
        entries = gate(directory)
    except VerispatialError as e:
        raise BadInput(directory, "", e.rule if isinstance(e, ParseError) else str(e)) from None
    codes = set()
    for entry in entries:
        code = entry.report.exit_code
        codes.add(code)
        lost = [r.name for r in entry.report.results if r.verdict.value != "proved"]
        state = "holds" if code == EXIT_OK else f"LOST ({len(lost)} obligations not proved: {', '.join(lost[:3])})"
        sys.stdout.write(f"{entry.program.name}: {state} "
                         f"[{len(entry.report.results)} obligations, {entry.report.seconds:.1f} s]\n")
    # As Report.exit_code: a refutation outranks a checker error, which outranks a failure to prove.
    return next((c for c in (1, 4, 3) if c in codes), EXIT_OK)


@cli.command("compile", context_settings={"ignore_unknown_options": True, "help_option_names": []},
             add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def compile_cmd(args: tuple[str, ...]) -> int:
    """Compile a model graph (MODEL.json --target wormhole|blackhole|gpu -o STEP.json [--sections DIR]) into one
    certified program."""
    from verispatial.passes.cli_compile import run_compile

    return run_compile(args)


@cli.command("compose", context_settings={"ignore_unknown_options": True, "help_option_names": []},
             add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def compose_cmd(args: tuple[str, ...]) -> int:
    """Join certified programs (A.json B.json ... -o OUT.json [--state NAME]... [--placement stacked|round_robin]
    [--open K]...) into one certified program."""
    from verispatial.passes.cli_compose import run_compose

    return run_compose(args)


@cli.command("simulate")
@click.argument("program", metavar="PROGRAM.json")
@click.option("--trip", "trips", multiple=True, metavar="NAME=V", help="A trip's value (default: its max).")
@click.option("--seed", type=int, default=None, help="Pick each step at random with this seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON only.")
def simulate_cmd(program: str, trips: tuple[str, ...], seed: int | None, as_json: bool) -> int:
    """Run PROGRAM.json once in the reference interpreter (op semantics: docs/semantics.md)."""
    return _guard(as_json, lambda: run_simulate(program, trips, seed, as_json))


@cli.command("validate")
@click.argument("program", metavar="PROGRAM.json")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON only.")
def validate_cmd(program: str, as_json: bool) -> int:
    """Check PROGRAM.json against the schema and the structural rules; print every violation."""
    return _guard(as_json, lambda: run_validate(program, as_json))


@cli.command("schema")
def schema_cmd() -> int:
    """Print the JSON Schema of program.json."""
    from verispatial.ir.serialize import schema

    _write_json(schema())
    return EXIT_OK


def _error_line(msg: str) -> None:
    sys.stderr.write(f"verispatial: error: {msg}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``) and return the exit code; never raises and never
    prints a traceback (an interrupt is exit 130)."""
    try:
        rv = cli.main(args=list(argv) if argv is not None else None, prog_name="verispatial",
                      standalone_mode=False)
    except BadInput as e:
        _error_line(e.line())
        return EXIT_BAD_INPUT
    except CheckerError as e:
        sys.stderr.write(f"verispatial: checker error: {e}\n")
        return EXIT_CHECKER_ERROR
    except click.exceptions.NoArgsIsHelpError as e:
        sys.stdout.write(e.format_message() + "\n")
        return EXIT_BAD_INPUT
    except click.BadParameter as e:  # also a missing argument: name the option or argument, then the rule
        if e.param is not None:
            hint = "/".join(e.param.opts) if isinstance(e.param, click.Option) else (e.param.metavar or e.param.name or "")
        else:
            hint = e.param_hint if isinstance(e.param_hint, str) else ""
        rule = "missing (required)" if isinstance(e, click.MissingParameter) else e.message
        _error_line(f"{hint}: {rule}" if hint else rule)
        return EXIT_BAD_INPUT
    except click.ClickException as e:
        _error_line(e.format_message())
        return EXIT_BAD_INPUT
    except (click.exceptions.Abort, KeyboardInterrupt):
        sys.stderr.write("verispatial: interrupted\n")
        return EXIT_INTERRUPTED
    except Exception as e:  # a fault of the CLI itself: still one line, still no traceback
        sys.stderr.write(f"verispatial: checker error: {type(e).__name__}: {e}\n")
        return EXIT_CHECKER_ERROR
    return rv if isinstance(rv, int) else EXIT_OK
