"""Every number typed in a chapter's prose or alt text appears in its outputs.

The check itself is ``tools/prose_numbers.py`` (its docstring says which
numbers it reads and what it cannot catch); these tests run it on the built
book and show that it finds a planted contradiction.
"""

import importlib.util
import json
import sys

import pytest

from conftest import ROOT

spec = importlib.util.spec_from_file_location(
    "prose_numbers", ROOT / "tools" / "prose_numbers.py"
)
prose_numbers = importlib.util.module_from_spec(spec)
sys.modules["prose_numbers"] = prose_numbers
spec.loader.exec_module(prose_numbers)

EXECUTED = ROOT / "_build" / "jupyter_execute"

CHAPTER = """---
kernelspec:
  name: python3
---

# A chapter

The loss ends at 0.305, {glue:text}`acc` of the tokens are right, and
`lr=0.2` is in code. With $d = 0.75$ in math and 512 an integer.

```{code-cell} ipython3
---
mystnb:
  image:
    alt: A curve that ends at 0.30, the size of 1,024 tokens.
---
print(0.3049, 1024)
```
"""


def notebook_printing(text: str) -> dict:
    return {
        "cells": [
            {
                "cell_type": "code",
                "source": ["print()"],
                "outputs": [{"output_type": "stream", "text": [text]}],
            }
        ]
    }


def test_typed_numbers_reads_prose_and_alt_text_but_not_code_math_or_integers():
    typed = [t.text for t in prose_numbers.typed_numbers("c", CHAPTER)]
    assert typed == ["0.305", "0.30", "1,024"]


def test_a_typed_number_matches_its_output_at_its_own_precision():
    outputs = prose_numbers.output_numbers(notebook_printing("0.3049 47.7% 0.9812"), {})
    assert prose_numbers.matches("0.305", outputs)
    assert prose_numbers.matches("0.98", outputs)
    assert prose_numbers.matches("47.7%", outputs)
    assert not prose_numbers.matches("0.306", outputs)
    assert not prose_numbers.matches("0.3", {d for d in outputs if d > 1})


def test_unmatched_finds_a_planted_contradiction_in_a_small_chapter():
    notebook = notebook_printing("loss 0.3049, 1024")
    assert prose_numbers.unmatched("c", CHAPTER, notebook, {}) == []
    planted = CHAPTER.replace("ends at 0.305", "ends at 0.324")
    found = prose_numbers.unmatched("c", planted, notebook, {})
    assert [t.text for t in found] == ["0.324"]


@pytest.mark.slow
def test_book_prose_numbers_all_appear_in_the_outputs(site):
    problems = prose_numbers.check_book(EXECUTED)
    assert not problems, "\n".join(
        f"{t.chapter}.md, {t.where}: {t.text!r}: {t.context}" for t in problems
    )


@pytest.mark.slow
def test_book_check_catches_a_number_planted_in_a_real_chapter(site):
    name = "mistakes"
    source = (ROOT / "book" / f"{name}.md").read_text()
    notebook = json.loads((EXECUTED / f"{name}.ipynb").read_text())
    glued = json.loads((EXECUTED / f"{name}.glue.json").read_text())
    outputs = prose_numbers.output_numbers(notebook, glued)
    planted = next(
        f"0.{n:04d}"
        for n in range(1234, 9999, 7)
        if not prose_numbers.matches(f"0.{n:04d}", outputs)
    )
    sentence = f"\n\nThe held-out loss ends at {planted}, well below the other.\n"
    found = prose_numbers.unmatched(name, source + sentence, notebook, glued)
    assert planted in [t.text for t in found]


def test_every_allowed_number_is_still_typed_on_its_page():
    # An exception for a number the page no longer types would hide the next one.
    for chapter, allowed in prose_numbers.ALLOWED.items():
        source = (ROOT / "book" / f"{chapter}.md").read_text(encoding="utf-8")
        prose = {t.text for t in prose_numbers.typed_numbers(chapter, source)}
        stale = [n for n in allowed if n not in prose]
        assert not stale, f"{chapter}: ALLOWED lists {stale}, no longer in its prose"
