"""Certificate bytes against program bytes for a composed decode step (issue 19, goal 2), in one process.

The Llama-3.2-1B decode step with ``--layers`` decoder layers (``build_models.decode_step``), compiled for Wormhole
with one site per section (``--max-cols 1 --max-rows 1 --max-sites 1``, the corpus steps' caps), every section
certified, composed and certified, written as ``compile -o STEP.program.json`` writes it. Printed: the program's
bytes; the certificate's bytes as written (a templated step's version 4: its parts; version 3: places grouped per
counter, the rendezvous one entry, each
section's places and pass fragments once per content address), part by part; the same certificate in the version-2
form (``version2``) and in the version-1 form (every place an op
pair, each section's places and pass fragments inline: what ``compile`` wrote before), computed from it; and the
time of ``certify --certificate`` comparing the written certificate with the re-derived one.

    python benchmarks/bench_certificate.py [--layers 2] [--full] [--no-check] [--dir DIR] [--existing STEP.json]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _bytes(x: Any) -> int:
    """Bytes of ``x`` as certificates are written (``json.dumps(indent=1)``)."""
    return len(json.dumps(x, indent=1)) + 1


def version2(cert: dict[str, Any]) -> dict[str, Any]:
    """``cert`` (version 3) in the version-2 form: the rendezvous entry grouped back into its arrival and release
    places, and compose's fragment stating them again (what version 2 wrote). The proved obligations' reasons,
    which version 2 also wrote, are not in a version-3 certificate: this form is smaller than version 2 was."""
    from verispatial.certify.certificate import expand_rendezvous, version2_places

    if cert.get("version", 0) < 3:
        return cert
    out = {**cert, "version": 2, "places": version2_places(cert["places"])}
    entry = next((g for g in cert["places"] if g.get("kind") == "rendezvous"), None)
    rv = cert["compose"].get("rendezvous")
    if entry is not None and isinstance(rv, dict):
        out["compose"] = {**cert["compose"], "rendezvous": {**rv, "places": expand_rendezvous(entry)}}
    return out


def version1(cert: dict[str, Any]) -> dict[str, Any]:
    """``cert`` in the version-1 form: every place one op pair, every section's places and pass fragments inline."""
    from verispatial.certify.certificate import expand_places

    cert = version2(cert)
    out = {**cert, "version": 1, "places": expand_places(cert["places"])}
    frag = dict(cert["compose"])
    table = frag.pop("places")
    frag["sections"] = [{**s, "places": expand_places(table[s["places"]])} for s in frag["sections"]]
    out["compose"] = frag
    fragments = out.pop("pass_fragments")
    out["passes"] = {name: fragments[key] for name, key in cert["passes"].items()}
    return out


def _sizes(program: Path, cert: dict[str, Any], with_version1: bool = True) -> None:
    """Print the certificate's parts and its bytes against the program's, in the three versions' forms (the
    version-1 form only ``with_version1``: its op pairs are quadratic in a buffer's ops)."""
    p_bytes, c_bytes = program.stat().st_size, _bytes(cert)
    if cert.get("version") == 4:  # a templated program's (compile -o since version 3): its own parts only
        print("| part | bytes |\n|---|---:|")
        for k, v in cert.items():
            for kk, vv in (v.items() if k in ("compose", "obligations") else [("", v)]):
                if _bytes(vv) > 1000:
                    print(f"| {k}{'.' + kk if kk else ''} | {_bytes(vv):,} |")
        print(f"\n| program | certificate (version 4) | ratio |\n|---:|---:|---:|\n| {p_bytes:,} | {c_bytes:,} | "
              f"{c_bytes / p_bytes:.2f}x |")
        return
    old = _bytes(version1(cert)) if with_version1 else 0
    two = _bytes(version2(cert))
    print("| part | bytes |")
    print("|---|---:|")
    for k, v in cert.items():
        if k == "compose":
            for kk, vv in v.items():
                print(f"| compose.{kk} | {_bytes(vv):,} |")
        elif _bytes(v) > 1000:
            print(f"| {k} | {_bytes(v):,} |")
    print()
    print(f"| program | certificate (version {cert['version']}) | ratio | version-2 form (no reasons) | ratio | "
          "version-1 form | ratio |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {p_bytes:,} | {c_bytes:,} | {c_bytes / p_bytes:.2f}x | {two:,} | {two / p_bytes:.2f}x | "
          + (f"{old:,} | {old / p_bytes:.1f}x |" if old else "- | - |"))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", type=int, default=2, help="decoder layers of the step (default 2)")
    ap.add_argument("--dir", type=Path, default=None, help="where to write the step (default: a temporary directory)")
    ap.add_argument("--full", action="store_true", help="the full 8x8 mesh (the compiler's defaults), not one site per "
                                                        "section")
    ap.add_argument("--no-check", action="store_true", help="skip certify --certificate of the written step")
    ap.add_argument("--existing", type=Path, default=None, metavar="STEP.json",
                    help="only measure the sizes of a step compile -o wrote (its certificate beside it)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "examples" / "models"))
    import build_models  # type: ignore[import-not-found]

    from verispatial.cli import main as cli
    from verispatial.ir.graph import dumps_graph

    if args.existing is not None:
        _sizes(args.existing, json.loads(args.existing.with_name(args.existing.stem + ".certificate.json").read_text()),
               with_version1=False)
        return
    work = args.dir or Path(tempfile.mkdtemp())
    work.mkdir(parents=True, exist_ok=True)
    graph = work / "step.graph.json"
    graph.write_text(dumps_graph(build_models.decode_step(build_models.LLAMA, layers=args.layers)))
    program = work / "step.program.json"
    t0 = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()):
        caps = [] if args.full else ["--max-cols", "1", "--max-rows", "1", "--max-sites", "1"]
        rc = cli(["compile", str(graph), "--target", "wormhole", "-o", str(program), *caps, "--no-cache", "-q"])
    compiled = time.perf_counter() - t0
    assert rc == 0, f"compile exited {rc}"
    cert_path = work / "step.certificate.json"
    cert = json.loads(cert_path.read_text())
    where = "full mesh" if args.full else "one site per section"
    print(f"Llama-3.2-1B decode step, {args.layers} layers, Wormhole, {where}: compile -o {compiled:.1f} s\n")
    _sizes(program, cert)
    if args.no_check:
        return
    out = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = cli(["certify", "--no-cache", "-q", "--json", str(program), "--certificate", str(cert_path)])
    took = time.perf_counter() - t0
    results = json.loads(out.getvalue())["results"]
    cmp = [r["verdict"] for r in results if r["family"] == "certificate"]
    print(f"\ncertify --certificate: exit {rc}, certificate family {cmp}, {took:.1f} s")


if __name__ == "__main__":
    main()
