"""The package page's two typed examples print what the page says they print.

book/api.md is a reference, not an executed chapter, so its examples are
Python blocks followed by the output a reader should see. This test runs
each block and compares its printout with that output, line by line.
"""

import contextlib
import io
import re
from pathlib import Path

import pytest
import torch

API_PAGE = Path(__file__).resolve().parents[1] / "book" / "api.md"
EXAMPLE = re.compile(r"```python\n(?P<code>.*?)```.*?```text\n(?P<out>.*?)```", re.S)


def examples() -> list[tuple[str, str]]:
    """Each Python block of the page with the first text block after it."""
    return [(m["code"], m["out"]) for m in EXAMPLE.finditer(API_PAGE.read_text())]


def test_the_page_has_its_two_examples():
    assert len(examples()) == 2


@pytest.mark.parametrize("index", range(2))
def test_an_example_prints_what_the_page_shows(index):
    code, expected = examples()[index]
    torch.set_num_threads(1)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, f"api.md example {index}", "exec"), {})
    assert printed.getvalue().splitlines() == expected.splitlines()
