"""The typed examples of the package page and CONTRIBUTING.md print what they show.

book/api.md is a reference, not an executed chapter, and CONTRIBUTING.md is not
built at all, so their examples are Python blocks followed by the output a
reader should see. This test runs each file's blocks in order in one namespace
per file, as a reader would in one Python session (a later block may use what
an earlier one defined), and compares each block's printout with its output,
line by line.
"""

import contextlib
import functools
import io
import re
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = re.compile(r"```python\n(?P<code>.*?)```.*?```text\n(?P<out>.*?)```", re.S)
# How many examples each file has: the exported names, the two worked examples
# and the input check on the package page; which check runs, in
# CONTRIBUTING.md's "Input checks".
N_EXAMPLES = {"book/api.md": 4, "CONTRIBUTING.md": 3}
CASES = [(page, index) for page, n in N_EXAMPLES.items() for index in range(n)]


def examples(page: str) -> list[tuple[str, str]]:
    """Each Python block of ``page`` with the first text block after it."""
    return [(m["code"], m["out"]) for m in EXAMPLE.finditer((ROOT / page).read_text())]


def run(code: str, namespace: dict, label: str) -> str:
    """Run one block in ``namespace`` and return what it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, label, "exec"), namespace)
    return printed.getvalue()


@functools.cache
def printouts(page: str) -> tuple[str, ...]:
    """What each block of ``page`` printed, run in order in one namespace."""
    torch.set_num_threads(1)
    namespace: dict = {}
    return tuple(
        run(code, namespace, f"{page} example {i}")
        for i, (code, _) in enumerate(examples(page))
    )


@pytest.mark.parametrize("page", N_EXAMPLES)
def test_the_page_has_its_examples(page):
    assert len(examples(page)) == N_EXAMPLES[page]


@pytest.mark.parametrize(("page", "index"), CASES)
def test_an_example_prints_what_the_page_shows(page, index):
    expected = examples(page)[index][1]
    assert printouts(page)[index].splitlines() == expected.splitlines()


def test_install_line_names_this_version() -> None:
    """The package page's typed wheel name and version are this package's."""
    import transformer

    text = (ROOT / "book/api.md").read_text()
    wheels = re.findall(r"executable_transformer-([\w.]+)-py3-none-any\.whl", text)
    assert wheels, "book/api.md names no wheel"
    assert set(wheels) == {transformer.__version__}, (wheels, transformer.__version__)
    assert f"version, here {transformer.__version__};" in text
