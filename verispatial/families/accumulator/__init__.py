"""The accumulator (docs/semantics.md, "Accumulator"): AcquireAcc, ReleaseAcc, Compute and PackAcc and the DST tiles
a held acquire took."""
