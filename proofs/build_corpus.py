"""Rebuild the proof-gate corpus under ``proofs/`` and its ``manifest.json``: ``python proofs/build_corpus.py``.

What the corpus holds (``proofs/README.md``):

- ``examples/``: every program of ``examples/`` (the correct ones and ``broken/``), byte for byte, each with the
  certificate the checker derives. Expected verdicts are those ``examples/README.md`` documents (``EXAMPLES``
  below); the manifest records every family the checker refutes, and the build stops if the checker does not refute
  a documented family or does not prove a correct example.
- ``models/<model>.<target>/``: every section of every shipped layer and block graph of ``examples/models/`` on each
  target, compiled with the tests' caps (``--max-cols 2 --max-rows 2 --max-sites 4``) exactly as ``verispatial compile
  MODEL --target T --sections DIR`` writes them; every section must prove.
- ``steps/<model>.<target>``: the whole decode steps (``verispatial compile MODEL -o STEP.json``), one site per
  section. They are regenerated, not committed (tens of MB; ``.gitignore``), and marked ``ci: false``: ``gate --ci``
  leaves them out. ``--no-steps`` skips them.

``--check`` writes nothing: it compiles every program again (no checker) and exits 1 unless each equals the file
in the corpus and the manifest lists exactly the corpus's programs (``tests/test_corpus.py`` runs it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROOFS = ROOT / "proofs"
EXAMPLES = ROOT / "examples"
MODELS = EXAMPLES / "models"
REGENERATE = "python proofs/build_corpus.py"

#: examples/README.md's expected verdicts: None proves; else the families that must be refuted.
EXPECTED: dict[str, tuple[str, ...] | None] = {
    "matmul_reuse_mcast_wormhole": None,
    "matmul_reuse_mcast_blackhole": None,
    "pipeline_small": None,
    "three_sections": None,
    "broken/a_reserve_over_capacity": ("circular-buffer",),
    "broken/b_ring_straddle": ("circular-buffer",),
    "broken/c_trip_sender": ("deadlock",),
    "broken/d_blackhole_no_flush": ("async-noc",),
    "broken/e_read_no_barrier": ("async-noc",),
    "broken/f_memory_overlap": ("memory",),
    "broken/g_rendezvous_short": ("happens-before",),
    # Hardware-fidelity rules (issue 7): one broken example per rule.
    "mcast_pair": None,
    "broken/h_writer_pops_before_flush": ("async-noc",),
    "broken/i_compute_before_wait": ("circular-buffer",),
    "broken/j_no_acquire": ("accumulator",),
    "broken/k_output_unwritten": ("happens-before",),
    "broken/l_push_unfilled": ("circular-buffer",),
    "broken/m_alias_pack_clobber": ("memory",),
    "broken/n_mcast_before_read_barrier": ("async-noc",),
    "broken/o_mcast_slot_reused": ("async-noc",),
    "broken/p_flag_source_set_by_compute": ("async-noc", "deadlock"),
    "broken/w_acc_fp32_overflow": ("accumulator",),
    "broken/x_acc_overrun": ("accumulator",),
    # Protocols (issue 7).
    "peeled_k_loop": None,
    "counter_release": None,
    "valid_source": None,
    "kv_cache_update": None,
    "vendor_receiver": None,
    "broken/q_peel_reload_first": ("deadlock",),
    "broken/r_release_overshoot": ("semaphore", "deadlock"),
    "broken/s_flag_reset_late": ("semaphore", "deadlock"),
    "broken/t_kv_no_rendezvous": ("happens-before",),
    "broken/v1_vendor_receiver_no_ack": ("semaphore", "deadlock"),
    "remote_write": None,
    "all_to_all_read": None,
    "broken/z_remote_write_inc_first": ("async-noc",),
    "broken/za_remote_read_unpublished": ("async-noc",),
    "broken/v2_ready_reset_after_flag": ("semaphore", "deadlock"),
    # A forwarder: multicast from a buffer's front (issue 7).
    "forwarder": None,
    "broken/u_forwarder_pops_early": ("async-noc",),
    # Pages an engine fills by local stores (FillTiles, issue 16).
    "reduce_scaler": None,
    "broken/y_scaler_push_unfilled": ("circular-buffer",),
    # Vendor kernels as written (examples/vendor/README.md).
    "vendor/eltwise_binary": None,
    "vendor/ttlang_multinode_matmul": None,
    # Its reduce scalers' stores are pushed with no drain (docs/semantics.md "Local-store fills").
    "vendor/softmax_w": ("async-noc",),
    "vendor/broken/move_overlap_atomic_pending": ("async-noc",),
    "vendor/broken/sampling_wt1_wait2": ("deadlock",),
    "vendor/broken/move_overlap_num_dests": ("deadlock", "async-noc"),
    "vendor/sort_exchange_wait_min": None,
    "vendor/broken/sort_exchange_exact_wait": ("semaphore", "deadlock"),
    "vendor/broken/argmax_start_exact_wait": ("semaphore", "deadlock"),
    "vendor/argmax_start_wait_min": None,
    "vendor/eltwise_binary_sharded": None,
    "vendor/broken/eltwise_binary_sharded_cb_overrun": ("circular-buffer", "happens-before"),
    "vendor/sort_exchange_data": None,
    "vendor/dispatch_mailbox": None,
    "vendor/broken/dispatch_mailbox_no_barrier": ("async-noc",),
    "vendor/layernorm_sharded": ("async-noc",),
    "vendor/broken/layernorm_sharded_read_before_valid": ("async-noc",),
    "vendor/contributed_multicast": None,
    "vendor/broken/contributed_multicast_as_shipped": ("circular-buffer", "async-noc"),
    "vendor/sdpa_decode_cur_pos": None,
    "vendor/broken/sdpa_decode_cur_pos_shared": ("deadlock",),
    "vendor/softmax_w_scale_mask": ("async-noc",),
    "vendor/softmax_w_causal_mask": ("async-noc",),
    "vendor/broken/softmax_w_causal_compute_batch_mask_reader": ("deadlock", "async-noc"),
}
#: The layer and block graphs (the whole decode steps are ``STEPS``), the targets, the tests' caps.
GRAPHS = ("mlp_block", "state_accumulate", "llama3_2_1b_decode", "qwen2_5_0_5b_decode", "llama3_2_1b_prefill",
          "qwen2_5_0_5b_prefill")
TARGETS = ("wormhole", "blackhole", "gpu")
CAPS = (2, 2, 4)
STEPS = ("llama3_2_1b_decode_step", "qwen2_5_0_5b_decode_step")
STEP_TARGETS = ("wormhole",)
STEP_CAPS = (1, 1, 1)


def _say(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def _examples() -> Iterator[tuple[str, Path]]:
    for name in EXPECTED:
        yield f"examples/{name}", EXAMPLES / f"{name}.json"


def _compiled(model: str, target: str, caps: tuple[int, int, int], check: bool, cache: Any = None) -> Any:
    from verispatial.ir.graph import load_graph
    from verispatial.ir.target import get_target
    from verispatial.passes.compile import compile_model
    from verispatial.passes.pipeline import Pipeline, capped_passes

    graph = load_graph(MODELS / f"{model}.json")
    return graph, compile_model(graph, get_target(target), pipeline=Pipeline(capped_passes(*caps)), check=check,
                                cache=cache)


def expected_programs() -> dict[str, dict[str, Any]]:
    """Every program of the corpus with its manifest entry, without running the checker (the refuted families of
    the broken examples are filled in by ``build``)."""
    out: dict[str, dict[str, Any]] = {}
    for name, src in _examples():
        fams = EXPECTED[name.split("/", 1)[1]]
        out[name] = {"expect": "proved" if fams is None else "refuted", "ci": True,
                     "source": {"example": src.relative_to(ROOT).as_posix()}}
        if fams is not None:
            out[name]["refuted"] = list(fams)
    for model in GRAPHS:
        for target in TARGETS:
            _graph, sections = _compiled(model, target, CAPS, check=False)
            for s in sections:
                out[f"models/{model}.{target}/{s.name}"] = {
                    "expect": "proved", "ci": True,
                    "source": {"model": f"examples/models/{model}.json", "target": target, "caps": list(CAPS),
                               "op": s.name}}
    for model in STEPS:
        for target in STEP_TARGETS:
            out[f"steps/{model}.{target}"] = {
                "expect": "proved", "ci": False,
                "source": {"step": f"examples/models/{model}.json", "target": target, "caps": list(STEP_CAPS)}}
    return out


def build(steps: bool) -> int:
    """Write the corpus and the manifest; 1 when a program's verdict is not the documented one (nothing of the
    manifest is written then)."""
    from verispatial.certify.certificate import derive_certificate
    from verispatial.certify.report import Verdict
    from verispatial.driver.cache import ProofCache
    from verispatial.driver.run import certify
    from verispatial.ir.serialize import load_program
    from verispatial.ir.target import get_target
    from verispatial.passes.compile import compose_step, write_program, write_sections

    t0 = time.perf_counter()
    entries = expected_programs()
    bad: list[str] = []
    proofs = ProofCache()
    shutil.rmtree(PROOFS / "examples", ignore_errors=True)
    for name, src in _examples():
        program = load_program(src)
        report = certify(program, cache=proofs)
        dest = PROOFS / f"{name}.program.json"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        (PROOFS / f"{name}.certificate.json").write_text(json.dumps(derive_certificate(program, report), indent=1)
                                                         + "\n")
        e = entries[name]
        refuted = sorted({r.family for r in report.results if r.verdict == Verdict.REFUTED})
        if e["expect"] == "proved" and report.exit_code != 0:
            bad.append(f"{name}: expected proved, exit {report.exit_code}")
        if e["expect"] == "refuted":
            missing = [f for f in e["refuted"] if f not in refuted]
            if missing:
                bad.append(f"{name}: expected refuted in {missing}, got refuted {refuted}")
            from verispatial.certify.report import FAMILIES

            e["refuted"] = sorted(refuted, key=lambda f: FAMILIES.index(f) if f in FAMILIES else len(FAMILIES))
        _say(f"{name}: exit {report.exit_code}, refuted {refuted} ({time.perf_counter() - t0:.0f} s)")
    models = PROOFS / "models"
    models.mkdir(exist_ok=True)
    wanted = {f"{m}.{t}" for m in GRAPHS for t in TARGETS}
    for d in models.iterdir():
        if d.name not in wanted:
            shutil.rmtree(d)
    for model in GRAPHS:
        for target in TARGETS:
            _graph, sections = _compiled(model, target, CAPS, check=True, cache=proofs)
            write_sections(sections, models / f"{model}.{target}")
            for s in sections:
                if s.report is None or s.report.exit_code != 0:
                    bad.append(f"models/{model}.{target}/{s.name}: not proved")
            _say(f"models/{model}.{target}: {len(sections)} sections ({time.perf_counter() - t0:.0f} s)")
    if steps:
        for model in STEPS:
            for target in STEP_TARGETS:
                graph, sections = _compiled(model, target, STEP_CAPS, check=True, cache=proofs)
                step = compose_step(graph, sections, get_target(target), cache=proofs, progress=_say)
                # The step as compile -o writes it: its templated form (program format version 3) when it has one.
                write_program(step.document, step.certificate, PROOFS / "steps" / f"{model}.{target}.program.json")
                if step.report is None or step.report.exit_code != 0:
                    bad.append(f"steps/{model}.{target}: not proved")
                _say(f"steps/{model}.{target}: {len(step.document.sections)} sections, {step.ops} ops "
                     f"({time.perf_counter() - t0:.0f} s)")
    if bad:
        for b in bad:
            _say(f"error: {b}")
        return 1
    manifest = {"format": "verispatial.proof-manifest", "version": 1, "regenerate": REGENERATE,
                "programs": dict(sorted(entries.items()))}
    (PROOFS / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    _say(f"{len(entries)} programs in {time.perf_counter() - t0:.0f} s")
    return 0


def _manifest_programs() -> dict[str, dict[str, Any]]:
    p = PROOFS / "manifest.json"
    if not p.exists():
        return {}
    return dict(json.loads(p.read_text())["programs"])


def check() -> list[str]:
    """Every difference between what the builder would write (programs, manifest entries without the checker's
    refuted families) and the committed corpus."""
    from verispatial.ir.serialize import dumps

    out: list[str] = []
    manifest = _manifest_programs()
    want = expected_programs()
    if set(manifest) != set(want):
        out.append(f"manifest programs differ: missing {sorted(set(want) - set(manifest))[:3]}, "
                   f"extra {sorted(set(manifest) - set(want))[:3]}")
    for name, e in want.items():
        m = manifest.get(name, {})
        if {k: v for k, v in m.items() if k != "refuted"} != {k: v for k, v in e.items() if k != "refuted"}:
            out.append(f"{name}: manifest entry {m} differs from {e}")
        if e["expect"] == "refuted" and not set(e["refuted"]) <= set(m.get("refuted", [])):
            out.append(f"{name}: manifest's refuted families {m.get('refuted')} lack {e['refuted']}")
    for name, src in _examples():
        if (PROOFS / f"{name}.program.json").read_bytes() != src.read_bytes():
            out.append(f"{name}: differs from {src.relative_to(ROOT)}")
    for model in GRAPHS:
        for target in TARGETS:
            _graph, sections = _compiled(model, target, CAPS, check=False)
            d = PROOFS / "models" / f"{model}.{target}"
            for s in sections:
                f = d / f"{s.name}.program.json"
                if not f.exists() or f.read_text() != dumps(s.program) + "\n":
                    out.append(f"models/{model}.{target}/{s.name}: differs from what compile writes")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-steps", action="store_true", help="leave the whole decode steps (ci: false) as they are")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 unless the corpus is up to date")
    args = ap.parse_args(argv)
    if args.check:
        diffs = check()
        for d in diffs:
            _say(d)
        return 1 if diffs else 0
    return build(steps=not args.no_steps)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
