"""Whether stdout is printed as plain text: the one test the warm path (``cli.warm``) and the full command's
``cli.output.emit`` share, in a module of its own so that neither imports the other."""

from __future__ import annotations

import os
import sys


def plain_stdout() -> bool:
    """Whether rich would print stdout as plain text (no terminal, no colour forced, no notebook): then the lines are
    written as they are, without importing rich."""
    if sys.stdout.isatty() or "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ:
        return False
    import builtins

    return not hasattr(builtins, "get_ipython")  # rich prints into a notebook's display there
