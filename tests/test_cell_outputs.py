"""Printed output is merged exactly, however the kernel chunked it
(book/_ext/cell_outputs.py).

tests/test_build_trust.py builds books with failing and warning cells.
"""

import nbformat
from cell_outputs import merge_streams  # book/_ext, on the path from conftest.py


def _stream(text, name="stdout"):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_merge_streams_does_not_break_a_line_split_across_chunks():
    one = merge_streams([_stream("query   (2, 3, 8)\nkey\n")])
    split = merge_streams(
        [_stream("query  "), _stream(" (2, 3, 8)\n"), _stream("key\n")]
    )
    assert one == split
    assert split[0]["text"] == "query   (2, 3, 8)\nkey\n"


def test_merge_streams_keeps_stdout_and_stderr_apart():
    out = merge_streams([_stream("a"), _stream("warn\n", "stderr"), _stream("b\n")])
    assert [(o["name"], o["text"]) for o in out] == [
        ("stdout", "ab\n"),
        ("stderr", "warn\n"),
    ]
