"""Every exercise asks for a prediction before anything runs.

No build needed: each ``{exercise}`` block of book/*.md is read as written. An
exercise is predict, run, explain: its text asks the reader to predict (or
guess, or sketch) what will happen before the code that checks it, and its
solution holds a code cell that runs the check.
"""

from __future__ import annotations

import re

import pytest

from conftest import ROOT

BOOK = ROOT / "book"
EXERCISE = re.compile(r"^```\{exercise\}[^\n]*\n(?P<body>.*?)^```\s*$", re.M | re.S)
LABEL = re.compile(r"^:label:\s*(\S+)", re.M)
PREDICT = re.compile(r"\b(predict|guess|sketch your prediction)\w*", re.I)
SOLUTION = r"^```\{{solution-start\}} {label}\n(?P<body>.*?)^```\{{solution-end\}}"


def _exercises() -> list[tuple[str, str, str, str]]:
    found = []
    for page in sorted(BOOK.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in EXERCISE.finditer(text):
            body = match.group("body")
            label = LABEL.search(body)
            name = (
                label.group(1)
                if label
                else f"line {text[: match.start()].count(chr(10)) + 1}"
            )
            solution = re.search(
                SOLUTION.format(label=re.escape(name)), text, re.M | re.S
            )
            found.append(
                (page.name, name, body, solution.group("body") if solution else "")
            )
    return found


EXERCISES = _exercises()


def test_exercises_found() -> None:
    # the pattern still reads the pages: a change of syntax would empty the list
    assert len(EXERCISES) >= 40
    assert len({page for page, *_ in EXERCISES}) >= 15


@pytest.mark.parametrize(
    ("page", "label", "body", "solution"),
    EXERCISES,
    ids=[f"{page}:{label}" for page, label, _, _ in EXERCISES],
)
def test_exercise_predicts_then_runs(
    page: str, label: str, body: str, solution: str
) -> None:
    assert PREDICT.search(body), (
        f"{page}, exercise {label}: its text never asks for a prediction "
        "('Predict ...' before the reader runs anything)"
    )
    assert solution, f"{page}, exercise {label}: no solution block follows it"
    assert "```{code-cell}" in solution, (
        f"{page}, exercise {label}: its solution runs nothing; "
        "an exercise is checked by running code"
    )
