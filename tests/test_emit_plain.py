"""``cli.output.emit`` writes lines rich would print as they are without rich (no terminal, printable ASCII), and
what it writes is rich's rendering byte for byte; anything else goes through rich."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from verispatial.cli.output import emit


def rich_rendering(lines: list[tuple[str, str]]) -> str:
    buf = io.StringIO()
    con = Console(file=buf, highlight=False, soft_wrap=True, markup=False, emoji=False)
    for text, style in lines:
        con.print(Text(text, style=style))
    return buf.getvalue()


@pytest.mark.parametrize("lines", [
    [("program logits_243_sections  target wormhole_b0  engines 192  ops 300494", "bold"),
     ("  circular-buffer  17377 proved    0 refuted    0 failed-to-prove    0 error      0.01 s", "green"),
     ("", ""), ("verdict: proved [54817 of 54817]  ", "bold green"), ("x" * 300, "red")],
    [("a tab\there", ""), ("non-ASCII: \u00e9 \u2192", "")],   # rich expands the tab; the whole list goes through rich
])
def test_emit_writes_what_rich_prints(lines: list[tuple[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    emit(lines)
    assert capsys.readouterr().out == rich_rendering(lines)
