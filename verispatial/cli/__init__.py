"""The ``verispatial`` command line: one click application (``verispatial.cli.app``).

``main(argv) -> int`` never raises and never prints a traceback; the exit codes are listed in ``app``. A warm
``certify`` of a proved program file is answered first from the proof store (``warm.py``), before the click
application and the modules it loads are imported; anything else, and any doubt, runs the application.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from verispatial import budget

if os.path.basename(sys.argv[0]) == "verispatial":  # the console script: before the heavy imports (budget.py)
    budget.defer_sigint()

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``) and return the exit code; never raises and never
    prints a traceback (an interrupt is exit 130)."""
    try:
        from verispatial.cli.warm import answer

        rv = answer(argv)
    except KeyboardInterrupt:  # SIGINT not deferred (``main`` called from Python): as ``exits.run`` words it
        sys.stderr.write("verispatial: interrupted\n")
        return 130
    except Exception:  # a fault of the shortcut: the full command decides (and words any error)
        rv = None
    if rv is not None:
        return rv
    from verispatial.cli.app import main as run_app

    return run_app(argv)
