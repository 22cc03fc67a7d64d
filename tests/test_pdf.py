"""The whole book as one PDF (`make pdf`): every chapter, figures, typeset math,
code that fits the page, page numbers.

`make pdf` builds the single-page HTML from the execution cache and prints it
with the system's Chromium; this module runs it once and reads the PDF with
pypdf.
"""

import json
import re
import runpy
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import pytest

from conftest import ROOT, chapters

pytestmark = pytest.mark.slow

PDF_DIR = ROOT / "_build" / "pdf"
PDF = PDF_DIR / "executable-transformer.pdf"


def titles() -> dict[str, str]:
    """The title (first `# ` heading) of every page of the book but the index,
    with its apostrophes typeset as Sphinx's smart quotes print them."""
    found = {}
    for path in sorted((ROOT / "book").glob("*.md")):
        if path.stem == "index":
            continue
        heading = next(
            line for line in path.read_text().splitlines() if line.startswith("# ")
        )
        found[path.stem] = heading[2:].strip().replace("'", "\u2019")
    return found


@pytest.fixture(scope="module")
def pdf():
    """Run `make pdf` once; return the PDF's pages' text and the reader."""
    from pypdf import PdfReader

    result = subprocess.run(["make", "pdf"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    reader = PdfReader(PDF)
    texts = [page.extract_text() or "" for page in reader.pages]
    return reader, texts


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_pdf_has_the_table_of_contents_then_every_chapter(pdf):
    _, texts = pdf
    names = titles()
    assert set(chapters()) <= set(names)
    contents = next(i for i, t in enumerate(texts[:3]) if "Contents" in t.split())
    toc = _flat(" ".join(texts[contents : contents + 2]))
    assert [t for t in names.values() if t not in toc] == []
    # after the contents, every chapter in the order of the contents
    body = _flat(" ".join(texts[contents + 1 :]))
    order = sorted(names.values(), key=toc.find)
    positions = []
    for title in order:
        positions.append(body.find(title, positions[-1] + 1 if positions else 0))
    assert [t for t, p in zip(order, positions) if p < 0] == []


def test_pdf_math_is_typeset_never_raw_tex(pdf):
    _, texts = pdf
    raw = [(i + 1, m.group(0)) for i, t in enumerate(texts)
           for m in re.finditer(r"\$\$|\\frac|\\sqrt|\\mathbb", t)]  # fmt: skip
    assert raw == []
    report = json.loads((PDF_DIR / "print-report.json").read_text())
    assert report["raw"] == []


def test_pdf_code_lines_fit_the_page(pdf):
    report = json.loads((PDF_DIR / "print-report.json").read_text())
    assert sorted(report["chapters"]) == sorted(titles().values())
    assert report["wide"] == []


def test_pdf_pages_are_numbered_and_their_count_is_plausible(pdf):
    reader, texts = pdf
    n = len(reader.pages)
    chapters_count = len(titles())
    # Every chapter starts on a new page and has several pages of text,
    # code and figures; none is a book of its own.
    assert 3 * chapters_count <= n <= 40 * chapters_count
    unnumbered = [i + 1 for i, t in enumerate(texts) if f"{i + 1} / {n}" not in t]
    assert unnumbered == []


class _Images(HTMLParser):
    def __init__(self):
        super().__init__()
        self.sources = set()

    def handle_starttag(self, tag, attrs):
        src = dict(attrs).get("src") or ""
        if tag == "img" and src.startswith("_images/"):
            self.sources.add(src)


def test_pdf_holds_every_figure_of_the_book(pdf):
    reader, _ = pdf
    parser = _Images()
    parser.feed((PDF_DIR / "singlehtml" / "index.html").read_text())
    images = set()

    def collect(resources) -> None:
        """Add the images of ``resources``, and of the form objects it draws."""
        for ref in (resources or {}).get("/XObject", {}).values():
            xobject = ref.get_object()
            if xobject.get("/Subtype") == "/Image":
                images.add(ref.idnum)
            elif xobject.get("/Subtype") == "/Form":  # Chromium wraps some images
                collect(xobject.get("/Resources"))

    for page in reader.pages:
        collect(page.get("/Resources"))
    assert len(parser.sources) >= 30  # the chapters' figures
    assert len(images) >= len(parser.sources)


def test_index_links_the_hosted_pdf_and_make_pdf_puts_one_beside_it(site, pdf):
    index = (site / "index.html").read_text()
    book = runpy.run_path(str(ROOT / "conf.py"))["BOOK_URL"]
    assert f'href="{book}executable-transformer.pdf"' in index
    assert (site / "executable-transformer.pdf").stat().st_size == PDF.stat().st_size


def test_pdf_links_point_at_the_hosted_book_never_at_this_machine(pdf):
    reader, _ = pdf
    uris = [
        action["/URI"]
        for page in reader.pages
        for annotation in page.get("/Annots", [])
        if "/URI" in (action := annotation.get_object().get("/A", {}))
    ]
    book = runpy.run_path(str(ROOT / "conf.py"))["BOOK_URL"]
    assert (
        f"{book}_downloads/executable-transformer-notebooks.zip" in uris
    )  # the index's
    assert [u for u in uris if u.startswith("file:")] == []
    raw = PDF.read_bytes()
    for path in {str(ROOT), quote(str(ROOT)), str(Path.home()) + "/"}:
        assert path.encode() not in raw, path
