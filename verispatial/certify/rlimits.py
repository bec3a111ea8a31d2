"""The solver's default budget per query, apart from ``smt.py`` so that reading it imports no solver: a warm
``certify`` keys its file index by it (``driver/files.py``) and never starts Z3."""

#: Deterministic budget per query (Z3 ``rlimit`` units); reproducible unlike wall-clock timeouts.
DEFAULT_RLIMIT = 20_000_000
