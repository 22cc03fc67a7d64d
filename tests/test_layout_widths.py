"""No code line over 88 characters and no output line over 100 on the pages.

Read from the executed notebooks of ``make html`` (``_build/jupyter_execute``),
cell by cell, skipping what a page does not show: cells tagged
``remove-cell``, the code of cells tagged ``remove-input`` and the outputs of
cells tagged ``remove-output``, and the values a cell only glues.
"""

import json

import pytest

from conftest import ROOT, chapters

pytestmark = pytest.mark.slow

CODE_WIDTH, OUTPUT_WIDTH = 88, 100


def too_wide(notebook: dict) -> list[str]:
    """Every shown line of ``notebook`` wider than the limits, with its cell."""
    found = []
    code_cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    for index, cell in enumerate(code_cells):
        tags = set(cell.get("metadata", {}).get("tags", []))
        if "remove-cell" in tags:
            continue
        if "remove-input" not in tags:
            for line in "".join(cell["source"]).splitlines():
                if len(line) > CODE_WIDTH:
                    found.append(f"code cell {index}, {len(line)} chars: {line}")
        if "remove-output" in tags:
            continue
        for output in cell.get("outputs", []):
            if "scrapbook" in output.get("metadata", {}):
                continue  # a glued value, shown in the text, not as an output
            data = output.get("data", {})
            if output.get("output_type") == "stream":
                text = "".join(output["text"])
            elif set(data) == {"text/plain"}:
                text = "".join(data["text/plain"])
            else:
                continue  # a figure or HTML: its own width
            for line in text.splitlines():
                if len(line) > OUTPUT_WIDTH:
                    found.append(
                        f"output of code cell {index}, {len(line)} chars: {line}"
                    )
    return found


def test_too_wide_finds_a_long_code_line_and_a_long_output_line():
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "source": ["x = 1  # " + "a" * 80],
                "outputs": [
                    {"output_type": "stream", "text": ["b" * 101 + "\n", "ok\n"]}
                ],
            },
            {
                "cell_type": "code",
                "metadata": {"tags": ["remove-cell"]},
                "source": ["y" * 200],
                "outputs": [],
            },
        ]
    }
    assert [line.split(",")[0] for line in too_wide(notebook)] == [
        "code cell 0",
        "output of code cell 0",
    ]


@pytest.mark.parametrize("name", chapters())
def test_chapter_code_and_output_lines_fit_the_page(site, name):
    path = ROOT / "_build" / "jupyter_execute" / f"{name}.ipynb"
    wide = too_wide(json.loads(path.read_text()))
    assert not wide, f"{name}:\n" + "\n".join(wide)
