"""Names and strings that are not plain printable text (names are printed in every report).

Found by trying them: a buffer named ``"c\\udcff"`` (a lone surrogate, which JSON's ``\\u`` escapes can spell but
UTF-8 cannot encode) passed ``validate`` and certify, and ``explain`` then died as a checker error (exit 4,
``UnicodeEncodeError``) writing its pages; a name holding U+202E RIGHT-TO-LEFT OVERRIDE passed too, and printed in a
report it reorders the rest of the line on the terminal (the "Trojan Source" trick). Both are now bad input (exit 2,
one line); a name spelled with a surrogate pair (an emoji) stays a name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verispatial.cli import main
from verispatial.errors import ParseError
from verispatial.ir.limits import name_rule
from verispatial.ir.serialize import parse_json

HERE = Path(__file__).parent
VALID = HERE / "badinput" / "small_valid.json"


def with_buffer_name(tmp_path: Path, escaped: str) -> Path:
    """small_valid.json with buffer 0 named by the JSON string body ``escaped`` (written as given: escapes kept)."""
    d = json.loads(VALID.read_text(encoding="utf-8"))
    d["buffers"][0]["name"] = "@NAME@"
    p = tmp_path / "p.json"
    p.write_text(json.dumps(d, indent=1).replace("@NAME@", escaped), encoding="utf-8")
    return p


@pytest.mark.parametrize("name", ["c_\u202e0", "c_\u2066x\u2069", "\u200fc"])
def test_bidirectional_controls_are_not_names(name: str) -> None:
    assert name_rule(name) == "a name holds no bidirectional controls (they reorder a report line on the terminal)"


def test_a_surrogate_pair_is_a_name_and_an_unpaired_one_is_not() -> None:
    assert name_rule("c_\U0001f600") is None
    assert name_rule("c_é") is None
    assert name_rule("c\udcff") == "a name holds no unpaired surrogates (not Unicode text)"


@pytest.mark.parametrize("escaped", ["c\\udcff", "c\\ud83d", "\\ude00c"])
def test_an_unpaired_surrogate_anywhere_in_a_document_is_bad_input(escaped: str) -> None:
    with pytest.raises(ParseError) as e:
        parse_json('{"a": [1, {"b": "' + escaped + '"}]}')
    assert e.value.field == "a[1].b"
    assert e.value.rule.startswith("an unpaired surrogate")


def test_a_surrogate_pair_escape_parses() -> None:
    assert parse_json('{"a": "\\ud83d\\ude00"}') == {"a": "\U0001f600"}


@pytest.mark.parametrize("command", [["certify", "-q", "--no-cache"], ["validate"], ["simulate"]])
def test_a_buffer_name_with_an_unpaired_surrogate_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               command: list[str]) -> None:
    p = with_buffer_name(tmp_path, "c\\udcff")
    assert main([*command, str(p)]) == 2
    err = capsys.readouterr().err
    assert err == (f"verispatial: error: {p}: buffers[0].name: an unpaired surrogate ('\\udcff') is not Unicode "
                   "text\n")


def test_explain_of_a_surrogate_name_is_bad_input_not_a_checker_error(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    p = with_buffer_name(tmp_path, "c\\udcff")
    assert main(["explain", str(p), "-o", str(tmp_path / "ex"), "-q", "--no-cache"]) == 2
    assert "an unpaired surrogate" in capsys.readouterr().err
    assert not (tmp_path / "ex").exists()


def test_a_buffer_name_with_a_bidi_override_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = with_buffer_name(tmp_path, "c_\\u202e0")
    assert main(["certify", "-q", "--no-cache", str(p)]) == 2
    err = capsys.readouterr().err
    assert err == (f"verispatial: error: {p}: buffer 0 'c_\\u202e0': a name holds no bidirectional controls (they "
                   "reorder a report line on the terminal)\n")
    assert "\u202e" not in err


def test_an_emoji_name_certifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = with_buffer_name(tmp_path, "c_\\ud83d\\ude00")
    assert main(["certify", "-q", "--no-cache", str(p)]) == 0
    assert "verdict: proved" in capsys.readouterr().out
