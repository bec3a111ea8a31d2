"""The corpus under proofs/ is what ``proofs/build_corpus.py`` writes: every program equals what compile writes
today (no checker run: the gate re-derives the certificates), and the manifest lists exactly the corpus."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_corpus_is_what_the_builder_writes() -> None:
    spec = importlib.util.spec_from_file_location("build_corpus", ROOT / "proofs" / "build_corpus.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["build_corpus"] = mod
    spec.loader.exec_module(mod)
    assert mod.check() == []
