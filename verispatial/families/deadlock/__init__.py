"""Deadlock (docs/semantics.md, "Op semantics — the ground truth"; docs/checker.md "Miscounted multicasts"): no
reachable state where every unfinished engine is blocked, for every trip value (``encoding.py``: per independent
component of engines, after the schedule witness of ``certify/schedule.py``). The family has no op class of its
own and no Promela part: a deadlock is the interpreter's run status (a run every engine of which is blocked) and
SPIN's invalid end state."""
