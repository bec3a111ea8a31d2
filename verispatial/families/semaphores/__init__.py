"""Semaphores (docs/semantics.md, "Semaphores"): SemInc, SemIncMcast, SemSet, SemWait, remote writes landing on a word,
exact counting and the words' end balance."""
