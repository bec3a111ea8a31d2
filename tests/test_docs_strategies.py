"""docs/strategies.md: the property test it shows (a user's own, in ten lines) runs as written and passes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parent.parent / "docs" / "strategies.md"


def snippet() -> str:
    """The first Python block of docs/strategies.md."""
    m = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert m is not None, "docs/strategies.md shows no python block"
    return m[1]


def test_the_documented_property_test_runs_and_passes() -> None:
    code = snippet()
    lines = [ln for ln in code.splitlines() if ln.strip()]
    assert len(lines) <= 12, len(lines)  # ten lines of test, give or take the imports
    ns: dict[str, Any] = {}
    exec(compile(code, str(DOC), "exec"), ns)
    tests = [v for k, v in ns.items() if k.startswith("test_") and callable(v)]
    assert len(tests) == 1
    tests[0]()  # Hypothesis runs its 10 examples; a failure raises here
