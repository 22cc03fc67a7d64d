"""Every listing of package code on a page shows its idea, and only it.

No build needed: each ``literalinclude`` of book/*.md is read as the page shows
it, by the directive's own reader (book/_ext/listing_captions.py), with its
options. A listing is captioned with its file, shows at most a few lines of
input checks and no long docstring, and on a Part I page names no Part II
concept. The package keeps its shape comments on their own lines.
"""

from __future__ import annotations

import ast
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
from listing_captions import ListingReader, docstring_lines
from markdown_it import MarkdownIt

from conftest import ROOT

BOOK = ROOT / "book"
PACKAGE = ROOT / "code" / "transformer"
MAX_CHECK_LINES = 3
MAX_DOCSTRING_LINES = 3
# Part II concepts, matched against the identifier parts of a listing, lowercased
# and joined by spaces: "RMSNorm" -> "rms norm", "n_kv_heads" -> "n kv heads".
PART_TWO = re.compile(
    r"\b(cache\w*|rope|rotary|kv heads?|h kv|grouped|gqa|swi ?glu|rms)\b"
)


@dataclass
class Listing:
    page: str
    line: int
    path: Path
    options: dict

    def __str__(self) -> str:
        return f"{self.page}:{self.line}:{self.options.get('pyobject', '')}"


class _Line(str):
    """A line of the source that remembers its number."""

    number: int


class _NumberedReader(ListingReader):
    """The directive's reader, noting which lines of the file it shows."""

    def read_file(self, filename, location=None) -> list[str]:
        lines = []
        for number, text in enumerate(super().read_file(filename, location), 1):
            lines.append(_Line(text))
            lines[-1].number = number
        return lines

    def dedent_filter(self, lines, location=None) -> list[str]:
        self.numbers = [line.number for line in lines]
        return super().dedent_filter(lines, location)


def _fences(page: Path, name: str) -> list[tuple[int, str, list[str]]]:
    """The ``{name}`` directives of ``page``: line, argument, lines of content.

    Directives nested in another one, such as a listing inside a dropdown
    admonition, count too: they are found in the outer directive's content.
    """
    return _fences_in(page.read_text(), name, 0)


def _fences_in(text: str, name: str, offset: int) -> list[tuple[int, str, list[str]]]:
    found = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type != "fence":
            continue
        directive, _, argument = token.info.strip().partition(" ")
        if directive == f"{{{name}}}":
            found.append(
                (offset + token.map[0] + 1, argument.strip(), token.content.split("\n"))
            )
        elif directive.startswith("{"):
            found += _fences_in(token.content, name, offset + token.map[0] + 1)
    return found


def _options(content: list[str]) -> dict:
    """The ``:key: value`` options at the top of a directive, as Sphinx types them."""
    options = {}
    for line in content:
        if not line.startswith(":"):
            break
        key, _, value = line[1:].partition(":")
        value = value.strip()
        options[key] = int(value) if key == "dedent" and value else value or None
    return options


def listings() -> list[Listing]:
    """Every ``literalinclude`` of package code on every page of the book."""
    found = []
    for page in sorted(BOOK.glob("*.md")):
        for line, argument, content in _fences(page, "literalinclude"):
            path = (page.parent / argument).resolve()
            if PACKAGE.resolve() in path.parents:
                found.append(Listing(page.stem, line, path, _options(content)))
    return found


def part_one_pages() -> set[str]:
    """The pages of the first two tables of contents of the index."""
    toctrees = _fences(BOOK / "index.md", "toctree")[:2]
    entries = [line.strip() for _, _, content in toctrees for line in content]
    return {entry for entry in entries if entry and not entry.startswith(":")}


def shown(listing: Listing) -> tuple[str, list[int]]:
    """The text the page shows, and the numbers of the source lines it shows."""
    config = SimpleNamespace(source_encoding="utf-8-sig")
    reader = _NumberedReader(listing.path, dict(listing.options), config)
    return reader.read()[0], reader.numbers


def _name(node: ast.expr) -> str:
    return getattr(node, "id", None) or getattr(node, "attr", "")


def check_lines(source: str) -> set[int]:
    """Lines of ``source`` that check inputs: a call of ``check_*`` or ``_check*``,
    a ``raise``, an ``if`` whose body only raises."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        raises = isinstance(node, ast.If) and all(
            isinstance(statement, ast.Raise) for statement in node.body
        )
        calls = isinstance(node, ast.Call) and _name(node.func).startswith(
            ("check_", "_check")
        )
        if raises or calls or isinstance(node, ast.Raise):
            found.update(range(node.lineno, node.end_lineno + 1))
    return found


def docstrings(source: str) -> list[range]:
    """The lines of every docstring in ``source``."""
    return [
        range(node.body[0].lineno, node.body[0].end_lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
        and ast.get_docstring(node, clean=False) is not None
    ]


def part_two_concepts(text: str) -> list[str]:
    parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", text)
    return PART_TWO.findall(" ".join(parts).lower())


LISTINGS = listings()
PART_ONE = part_one_pages()


def test_the_book_has_listings_of_package_code():
    assert len(LISTINGS) >= 50
    assert {"overview", "attention", "layers", "training"} <= PART_ONE
    assert not PART_ONE & {"modern_decoder", "attention_cost", "language_model"}


def test_listings_hide_docstrings_unless_asked():
    path, name = PACKAGE / "parts" / "attention.py", "scaled_dot_product_attention"
    hidden = shown(Listing("probe", 1, path, {"pyobject": name}))[0]
    kept = shown(Listing("probe", 1, path, {"pyobject": name, "docstring": None}))[0]
    assert '"""' in kept and '"""' not in hidden
    assert len(kept.splitlines()) > len(hidden.splitlines()) + 3
    assert set(hidden.splitlines()) <= set(kept.splitlines())


def test_the_counters_count():
    source = (
        'def f(x):\n    """One.\n\n    Two.\n    """\n    check_x(x)\n'
        "    if x < 0:\n        raise ValueError(\n            'negative')\n"
        "    _check_y(\n        x)\n    return x\n"
    )
    assert check_lines(source) == {6, 7, 8, 9, 10, 11}
    assert docstrings(source) == [range(2, 6)]
    assert docstring_lines(source.splitlines(True)) == {2, 3, 4, 5}
    assert part_two_concepts("RMSNorm(n_kv_heads); KVCache; SwiGLU; h_kv") == [
        "rms",
        "kv heads",
        "cache",
        "swi glu",
        "h kv",
    ]
    assert part_two_concepts("property, grope, batch_kv, trims, cached_not") == [
        "cached"
    ]


@pytest.mark.parametrize("listing", LISTINGS, ids=str)
def test_listing_is_captioned_with_its_file(listing):
    assert "caption" not in listing.options, (
        f"{listing}: :caption: replaces the caption naming {listing.path.name}"
    )
    assert listing.path.is_file(), f"{listing}: no file {listing.path}"
    text, numbers = shown(listing)
    assert text.strip() and numbers, f"{listing}: shows nothing"


@pytest.mark.parametrize("listing", LISTINGS, ids=str)
def test_listing_shows_few_input_checks(listing):
    text, numbers = shown(listing)
    checks = sorted(check_lines(listing.path.read_text()) & set(numbers))
    assert len(checks) <= MAX_CHECK_LINES, (
        f"{listing}: {len(checks)} lines of input checks (lines {checks})"
    )


@pytest.mark.parametrize("listing", LISTINGS, ids=str)
def test_listing_shows_no_long_docstring(listing):
    text, numbers = shown(listing)
    for lines in docstrings(listing.path.read_text()):
        visible = set(lines) & set(numbers)
        assert len(visible) <= MAX_DOCSTRING_LINES, (
            f"{listing}: a docstring of {len(visible)} lines (lines {lines})"
        )


@pytest.mark.parametrize("listing", LISTINGS, ids=str)
def test_listing_starts_at_the_left_margin(listing):
    # A method keeps its class's indentation unless the listing dedents it.
    text, _ = shown(listing)
    first = next(line for line in text.splitlines() if line.strip())
    assert first == first.lstrip(), f"{listing}: add :dedent: to the listing"


@pytest.mark.parametrize(
    "listing", [x for x in LISTINGS if x.page in PART_ONE], ids=str
)
def test_part_one_listing_names_no_part_two_concept(listing):
    found = part_two_concepts(shown(listing)[0])
    assert not found, f"{listing} (Part I) names Part II concepts: {sorted(set(found))}"


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_shape_comments_stand_on_their_own_line(path):
    with path.open("rb") as file:
        tokens = list(tokenize.tokenize(file.readline))
    trailing = [
        f"{path.name}:{token.start[0]}: {token.line.strip()}"
        for token in tokens
        if token.type == tokenize.COMMENT
        and token.string.startswith("# (")
        and token.line[: token.start[1]].strip()
    ]
    assert not trailing, "shape comments after code:\n" + "\n".join(trailing)
