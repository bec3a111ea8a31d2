"""``python -m verispatial``: the same command line as the ``verispatial`` console script."""

import os
import sys

from verispatial import budget

budget.defer_sigint()  # before the imports: an interrupt while they load still exits 130 with one line

from verispatial.cli import main  # noqa: E402

_code = main()
# The command is done and everything it writes is written (files atomically, before this returns): exit without
# the interpreter's teardown, which frees every object the run made one by one — a templated decode step's program,
# slices and report, 0.15-0.2 s of a cold certify's CPU. No atexit handler of the package needs to run (a pool of
# --jobs N is shut down where it is used). Should stdout or stderr not flush (a closed pipe), the plain exit
# reports it as it always did. Under a profiler or a tracer (``python -m cProfile -m verispatial``, coverage) the
# plain exit runs, so that the tool gets to write what it measured.
if sys.getprofile() is not None or sys.gettrace() is not None:
    raise SystemExit(_code)
try:
    sys.stdout.flush()
    sys.stderr.flush()
except BaseException:
    raise SystemExit(_code) from None
os._exit(_code)
