"""The proof cache: the kernel's memo of component proofs (``certify/canon.py``, ``ProofMemo``) that also keeps its
proofs in a persistent store (``store.py``), under the memo's key plus the checker's and the solver's versions, and
finds proofs of earlier processes there. The whole-program entries of ``driver.run.certify`` go through the same
store (``ProofCache.store``).

Untrusted: a proof read back is only taken when it is a well-formed, proved result of the family asked for
(anything else is rejected and counted, ``ProofStore.reject``); the store itself is trusted by provenance (written
by this checker and solver version alone, docs/checker.md "Trusted kernel"), and ``--no-cache`` leaves it out.
"""

from __future__ import annotations

from verispatial.certify.canon import ProofMemo
from verispatial.certify.report import Result, Verdict, result_from_data, result_to_data
from verispatial.driver.store import ProofStore


class ProofCache(ProofMemo):
    """A ``ProofMemo`` whose proofs are also read from and written to ``store`` when one is given; ``persisted``
    counts the reused proofs that came from the store."""

    def __init__(self, store: ProofStore | None = None) -> None:
        super().__init__()
        self.store = store
        self.persisted = 0

    def recall(self, key: str, family: str) -> tuple[str, str, str, str, str] | None:
        """A proof of this key from the persistent store: only a well-formed, proved result of this family."""
        if self.store is None:
            return None
        got = self.store.get("component", self.store.key("component", key))
        if got is None:
            return None
        try:
            r = result_from_data(got["result"])
            comp, program = got["component"], got["program"]
            if r.verdict != Verdict.PROVED or got["family"] != family or not isinstance(comp, str) \
                    or not isinstance(program, str):
                raise ValueError("not a proof of this family")
        except (ValueError, KeyError, TypeError):
            self.store.reject()
            return None
        self.persisted += 1
        return (r.family, r.name, r.reason, comp, f"{program} (proof cache)")

    def keep(self, key: str, family: str, r: Result, component: str, program: str) -> None:
        if self.store is not None:
            self.store.put("component", self.store.key("component", key),
                           {"family": family, "result": result_to_data(r), "component": component, "program": program})
