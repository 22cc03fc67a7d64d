"""Compare the numbers typed in a chapter's prose with what its cells computed.

A number in a sentence should come from a cell through ``glue``. This script
finds the ones typed by hand in a chapter's text and in its figures' alt
text, and reports each one that appears nowhere in the chapter's executed
notebook: not in a cell's output, not in a glued value, not in a cell's
source (where it is an input, such as a learning rate). A typed number that
disagrees with the outputs is then either a stale measurement or a
contradiction.

Which numbers are checked: decimals (``0.305``, ``-0.58``), percentages
(``47.7%``), and integers written with a thousands separator or a
multiplier (``1,024``, ``65M``). Plain integers are not checked: on these
pages they are sizes, positions and counts that the text chooses (``d_model
= 512``, ``position 8``, ``Table 3``, ``2017``). Numbers in math, inline
code, roles (``{glue:text}``, ``{ref}``) and code cells are skipped.

A prose number matches an output number when the output, rounded to the
prose number's decimals, equals it (``0.98`` matches ``0.9812``); a
percentage also matches the fraction (``47.7%`` matches ``0.477``).

Usage: ``python tools/prose_numbers.py [_build/jupyter_execute]`` after
``make html``; it prints every unmatched number and exits 1 if there is one.

What it cannot catch: a word that contradicts a number (``above`` where the
outputs say below), a plain integer, a number that happens to match some
other output of the same chapter, and figures' titles (they are code).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Numbers typed in prose that are not measurements of this build: quoted from
# elsewhere (the paper, another library's defaults), or
# constants. Chapter -> {number as typed: why}.
ALLOWED: dict[str, dict[str, str]] = {
    "assembled": {
        "65M": "the paper's count of its base model, quoted from its Table 3"
    },
    "modern_decoder": {
        "1.5": "3/2, the ratio of three matrices to two",
        "7B": "a model's name",
    },
    "kv_cache": {"70B": "a model's name"},
    "real_checkpoints": {
        "3.1": "a model's name, LLaMA 3.1",
        "3.2": "a model's name, LLaMA 3.2",
    },
    "positional": {
        "47,000": "2π·10000^(62/64), the formula's longest wavelength, rounded",
    },
    "training": {
        "0.0025": "half the peak of 0.005: the inverse square root at 4× the step"
    },
}

NUMBER = re.compile(
    r"(?<![\w.])"  # not inside a word or another number
    r"(?P<sign>[-−+])?"
    r"(?P<body>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d+)"
    r"(?P<suffix>\s?%|[MKkB](?![a-zA-Z]))?"
)


@dataclass(frozen=True)
class Typed:
    """A number typed in a chapter's prose or alt text."""

    chapter: str
    text: str  # as typed, e.g. "47.7%"
    where: str  # "prose, line 12" or "alt text of cell 7"
    context: str


def _strip_prose(text: str) -> str:
    """Blank out what is not prose; keep line numbers."""

    def blank(match: re.Match) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))

    text = re.sub(r"\A---\n.*?\n---\n", blank, text, flags=re.S)  # front matter
    text = re.sub(r"^(`{3,}|:{3,}).*?^\1\s*$", blank, text, flags=re.S | re.M)
    text = re.sub(r"\$\$.*?\$\$", blank, text, flags=re.S)  # display math
    text = re.sub(r"\$[^$\n]+\$", blank, text)  # inline math
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", blank, text)  # roles
    text = re.sub(r"`[^`\n]*`", blank, text)  # inline code
    text = re.sub(r"\]\([^)]*\)|<[^>\n]*>|https?://\S+", blank, text)  # links, HTML
    text = re.sub(r"^\(.*\)=\s*$", blank, text, flags=re.M)  # targets
    text = re.sub(r"^:[\w-]+:.*$", blank, text, flags=re.M)  # directive options
    return text


def _alt_texts(source: str) -> list[tuple[int, str]]:
    """Return (cell index among code cells, alt text) of every figure's alt."""
    alts = []
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", source, re.S | re.M)
    for index, cell in enumerate(cells):
        head = re.match(r"---\n(.*?)\n---\n", cell, re.S)
        if head:
            found = re.search(r"alt:\s*(.*?)(?=\n\s*\w+:|\Z)", head.group(1), re.S)
            if found:
                alts.append((index, " ".join(found.group(1).split())))
    return alts


def typed_numbers(chapter: str, source: str) -> list[Typed]:
    """Every checked number typed in ``source``'s prose and alt texts."""
    found = []
    prose = _strip_prose(source)
    for number, line in enumerate(prose.splitlines(), start=1):
        for m in NUMBER.finditer(line):
            if _checked(m):
                found.append(Typed(chapter, m.group(0), f"line {number}", line.strip()))
    for cell, alt in _alt_texts(source):
        for m in NUMBER.finditer(alt):
            if _checked(m):
                found.append(
                    Typed(chapter, m.group(0), f"alt text, code cell {cell}", alt)
                )
    return found


def _checked(m: re.Match) -> bool:
    before = m.string[: m.start()].rstrip().lower()
    if before.endswith(("section", "sections", "table", "equation", "eq.", "figure")):
        return False  # a reference to a part of a paper, not a measurement
    body = m.group("body")
    return "." in body or "," in body or bool(m.group("suffix"))


def _value(m: re.Match) -> tuple[Decimal, int, bool]:
    """The number's value, its decimals and whether it is a percentage."""
    body = m.group("body").replace(",", "")
    value = Decimal(body)
    if m.group("sign") in ("-", "−"):
        value = -value
    decimals = len(body.split(".")[1]) if "." in body else 0
    suffix = (m.group("suffix") or "").strip()
    scale = {
        "M": Decimal(10**6),
        "K": Decimal(10**3),
        "k": Decimal(10**3),
        "B": Decimal(10**9),
    }
    if suffix in scale:
        value *= scale[suffix]
        decimals -= {"M": 6, "K": 3, "k": 3, "B": 9}[suffix]
    return value, decimals, suffix == "%"


def output_numbers(notebook: dict, glued: dict) -> set[Decimal]:
    """Every number in the notebook's outputs, its code and its glued values."""
    texts = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        texts.append("".join(cell["source"]))
        for output in cell.get("outputs", []):
            texts.append("".join(output.get("text", "")))
            data = output.get("data", {})
            for kind in ("text/plain", "text/html", "text/markdown"):
                texts.append("".join(data.get(kind, "")))
    for entry in glued.values():
        texts.append("".join(entry.get("data", {}).get("text/plain", "")))
    values = set()
    for text in texts:
        text = re.sub(r"(?<=\d)_(?=\d)", "", text)  # 20_000 in code
        text = re.sub(r"(\d)e([-+]?\d+)", r"\1E\2", text)
        for m in re.finditer(r"[-−]?\d[\d,]*(?:\.\d+)?(?:E[-+]?\d+)?", text):
            raw = m.group(0).replace("−", "-")
            # "1,024" is one number, "(1,2)" two: keep both readings
            for part in [raw.replace(",", ""), *raw.split(",")]:
                try:
                    values.add(Decimal(part))
                except InvalidOperation:
                    continue
    return values


def matches(typed: str, outputs: set[Decimal]) -> bool:
    """Whether the typed number, at its own precision, is among ``outputs``."""
    m = NUMBER.fullmatch(typed.strip())
    if m is None:
        return False
    value, decimals, percent = _value(m)
    candidates = [value, -value] if m.group("sign") is None else [value]
    quantum = Decimal(1).scaleb(-decimals)
    for x in outputs:
        for scaled in (x, x * 100) if percent else (x,):
            for rounding in (ROUND_HALF_EVEN, ROUND_HALF_UP):
                try:
                    rounded = scaled.quantize(quantum, rounding=rounding)
                except InvalidOperation:
                    continue
                if rounded in candidates:
                    return True
    return False


def unmatched(chapter: str, source: str, notebook: dict, glued: dict) -> list[Typed]:
    """The typed numbers of one chapter that its outputs do not contain."""
    outputs = output_numbers(notebook, glued)
    allowed = ALLOWED.get(chapter, {})
    return [
        t
        for t in typed_numbers(chapter, source)
        if t.text.strip() not in allowed and not matches(t.text, outputs)
    ]


def check_book(executed: Path, book: Path = ROOT / "book") -> list[Typed]:
    """Every unmatched number of every executed chapter."""
    problems = []
    for path in sorted(executed.glob("*.ipynb")):
        source = book / f"{path.stem}.md"
        if not source.is_file():
            continue
        glue_file = executed / f"{path.stem}.glue.json"
        glued = json.loads(glue_file.read_text()) if glue_file.is_file() else {}
        notebook = json.loads(path.read_text())
        problems += unmatched(path.stem, source.read_text(), notebook, glued)
    return problems


def main() -> int:
    executed = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build" / "jupyter_execute"
    )
    problems = check_book(executed)
    for t in problems:
        print(
            f"{t.chapter}.md, {t.where}: {t.text!r} not in the outputs\n    {t.context}"
        )
    print(f"{len(problems)} typed number(s) not found in the outputs")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
