"""LineOutput: a text the output cannot encode is written escaped or replaced, never taken for a
closed output; a closed output is still one."""

from __future__ import annotations

import io
import json

from tau.modes.line_output import LineOutput


def _stream(encoding: str, errors: str = "strict") -> tuple[io.BytesIO, io.TextIOWrapper]:
    raw = io.BytesIO()
    return raw, io.TextIOWrapper(raw, encoding=encoding, errors=errors, write_through=True)


def test_plain_text_shows_a_lone_surrogate_as_a_replacement_character() -> None:
    raw, stream = _stream("utf-8")
    output = LineOutput(stream)
    assert output.write("a\ud83d\ude00 \ud83d\n")
    assert raw.getvalue().decode("utf-8") == "a😀 \ufffd\n"
    assert output.failure is None


def test_json_lines_escape_a_lone_surrogate() -> None:
    raw, stream = _stream("utf-8")
    line = json.dumps({"t": "é\ud83d"}, ensure_ascii=False) + "\n"
    assert LineOutput(stream, json_lines=True).write(line)
    assert raw.getvalue().decode("utf-8") == '{"t": "é\\ud83d"}\n'


def test_an_output_whose_encoding_lacks_a_character_is_not_a_closed_one() -> None:
    raw, stream = _stream("latin-1")
    text_output = LineOutput(stream)
    assert text_output.write("é😀\ud83d\n")
    assert raw.getvalue() == "é??\n".encode("latin-1")
    raw, stream = _stream("latin-1")
    assert LineOutput(stream, json_lines=True).write('{"t":"é😀\ud83d"}\n')
    assert json.loads(raw.getvalue()) == {"t": "é😀\ud83d"}


def test_a_surrogateescape_output_gets_no_bytes_that_are_not_utf8() -> None:
    raw, stream = _stream("utf-8", "surrogateescape")
    assert LineOutput(stream).write("\udcff\n")
    assert raw.getvalue().decode("utf-8") == "\ufffd\n"


def test_a_closed_output_is_still_a_failure() -> None:
    _, stream = _stream("utf-8")
    stream.close()
    output = LineOutput(stream)
    assert not output.write("x\ud83d\n")
    assert output.failure is not None and output.exit_code == 1
