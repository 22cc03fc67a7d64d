"""Build the book as a reader would (`make html`) and inspect `_build/html`."""

import json
import os
import re
import tempfile
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT, chapters

pytestmark = pytest.mark.slow


def test_book_has_chapters():
    assert "attention" in chapters()


@pytest.mark.parametrize("name", chapters())
def test_book_chapter_page_has_figures_as_images(site, name):
    page = (site / f"{name}.html").read_text()
    images = re.findall(r'<img[^>]+src="([^"]+)"', page)
    figures = [src for src in images if src.startswith("_images/")]
    assert figures, f"{name}.html shows no figure"
    for src in figures:
        assert (site / src).stat().st_size > 1000, src


@pytest.mark.parametrize("name", chapters())
def test_book_chapter_page_states_what_computed_it(site, name):
    text = (site / f"{name}.html").read_text()
    assert "Outputs computed on" in text and "by transformer" in text
    assert re.search(r"torch \d+\.\d+", text)


@pytest.mark.parametrize("name", chapters())
def test_book_chapter_offers_executed_notebook_download(site, name):
    page = (site / f"{name}.html").read_text()
    assert f"_sources/{name}.ipynb" in page, "no .ipynb in the download menu"
    nb = nbformat.read(site / "_sources" / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat == 4
    # The first code cell installs the package when needed and prints nothing;
    # the chapter's own first cell prints what computed the outputs.
    code = [c for c in nb.cells if c.cell_type == "code"][1:]
    assert code and code[0].outputs
    # every cell ran; hidden cells that only glue or assert print nothing
    assert all(c.execution_count is not None for c in code)
    assert any(c.outputs for c in code[1:])


def _text_files(folder: Path):
    for path in folder.rglob("*"):
        if path.is_file() and path.suffix in {
            ".html",
            ".ipynb",
            ".md",
            ".txt",
            ".js",
            ".json",
            ".css",
        }:
            yield path


def test_book_contains_no_machine_paths(site):
    needles = {str(ROOT), str(Path.home()) + "/", tempfile.gettempdir() + "/"}
    needles.add(os.path.realpath(ROOT))
    offenders = [
        f"{path.relative_to(site)}: {needle}"
        for path in _text_files(site)
        if "mathjax" not in path.parts
        for needle in needles
        if needle in path.read_text(errors="replace")
    ]
    assert not offenders, offenders[:10]


def test_book_loads_no_script_or_style_from_other_hosts(site):
    for page in site.rglob("*.html"):
        html = page.read_text()
        external = re.findall(
            r'<(?:script|link(?![^>]*rel="canonical")|img)[^>]+(?:src|href)="(https?://[^"]+)"',
            html,
        )
        assert not external, f"{page.name} loads {external}"


def test_book_serves_mathjax_locally(site):
    page = (site / "attention.html").read_text()
    match = re.search(r'<script[^>]+src="(_static/mathjax/tex-chtml\.js)[^"]*"', page)
    assert match, "MathJax is not loaded from _static"
    assert (site / match.group(1)).is_file()
    assert "\\(" in page  # inline math is left for MathJax to typeset


def test_book_index_links_every_chapter(site):
    index = (site / "index.html").read_text()
    for name in chapters():
        assert f'href="{name}.html"' in index, name


def test_book_build_leaves_no_error_reports(site):
    assert not (site / "reports").exists()
    assert json.loads((site / "_sources" / "attention.ipynb").read_text())["cells"]
