"""The package page's typed examples print what the page says they print.

book/api.md is a reference, not an executed chapter, so its examples are
Python blocks followed by the output a reader should see. This test runs
the blocks in order in one namespace, as a reader would in one Python
session (a later block may use what an earlier one defined), and compares
each block's printout with its output, line by line.
"""

import contextlib
import io
import re
from pathlib import Path

import pytest
import torch

API_PAGE = Path(__file__).resolve().parents[1] / "book" / "api.md"
EXAMPLE = re.compile(r"```python\n(?P<code>.*?)```.*?```text\n(?P<out>.*?)```", re.S)
N_EXAMPLES = 4


def examples() -> list[tuple[str, str]]:
    """Each Python block of the page with the first text block after it."""
    return [(m["code"], m["out"]) for m in EXAMPLE.finditer(API_PAGE.read_text())]


def run(code: str, namespace: dict, index: int) -> str:
    """Run one block in ``namespace`` and return what it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, f"api.md example {index}", "exec"), namespace)
    return printed.getvalue()


@pytest.fixture(scope="module")
def printouts() -> list[str]:
    """What each block printed, the blocks run in order in one namespace."""
    torch.set_num_threads(1)
    namespace: dict = {}
    return [run(code, namespace, i) for i, (code, _) in enumerate(examples())]


def test_the_page_has_its_examples():
    assert len(examples()) == N_EXAMPLES


@pytest.mark.parametrize("index", range(N_EXAMPLES))
def test_an_example_prints_what_the_page_shows(index, printouts):
    expected = examples()[index][1]
    assert printouts[index].splitlines() == expected.splitlines()
