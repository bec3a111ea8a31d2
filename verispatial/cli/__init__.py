"""The ``verispatial`` command line: one click application (``verispatial.cli.app``).

``main(argv) -> int`` never raises and never prints a traceback; the exit codes are listed in ``app``.
"""

from __future__ import annotations

import os
import sys

from verispatial import budget

if os.path.basename(sys.argv[0]) == "verispatial":  # the console script: before the heavy imports (budget.py)
    budget.defer_sigint()

from verispatial.cli.app import main

__all__ = ["main"]
